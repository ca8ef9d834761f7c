"""The extraction-quality eval of `structure` (see EVAL.md and docs/evaluation.md)."""
