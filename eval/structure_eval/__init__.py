"""The extraction-quality eval of `structure` (see eval/README.md and EVAL.md)."""
