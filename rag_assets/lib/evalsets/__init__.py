"""Evaluation sets: needle files and BEIR folders loaded as one row per query, the blocking checks a set
must pass against the corpus, and judging (which chunks hold a needle, where they landed in a ranking)."""
