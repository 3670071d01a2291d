"""Pure logic of rag_assets, in one package per stage of the lineage; no dagster import anywhere under it.

From the bottom up (each package imports only those below it; pyproject.toml's import-linter
contracts check it):

- ``formats``: JSON Lines, Markdown (escaping, the one table formatter), PNG figures.
- ``store``: where outputs live (paths, the object store), their schemas and build stamps.
- ``ingest``: corpus snapshot -> extracted, canonical text -> chunks.
- ``evalsets``: needle and BEIR evaluation sets, their checks, and judging a ranked list by spans.
- ``embed``: the model registry and loaders, the embedding cache, cluster embedding, embeddings partitions.
- ``retrieve``: the retrievers, the engine that runs them, retrieval-run partitions.
- ``evaluate``: the measures in DuckDB, intervals, paired tests, comparisons, regressions, refusal
  calibration, the report, TREC export.
- ``answer``: asking the index a question (``rag-assets ask``) and its traces.
"""
