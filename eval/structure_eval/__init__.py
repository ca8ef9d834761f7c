"""The extraction-quality eval of `structure` (see EVAL.md and README, "Extraction quality")."""
