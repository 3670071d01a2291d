"""The graph's stages, declared once, in data-flow order: each a job over the assets of one partitioning.

The named jobs (``jobs.py``), the order in which ``rag-assets evaluate`` runs them (``runner/evaluation.py``)
and the order the nightly completion rebuilds stale partitions in (``nightly.py``) are built from
``STAGES``; the automation conditions (``automation.py``) attach to the same assets. The last stage
appends the evaluation run; every stage before it is rebuilt where stale.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_assets.partitions import EXTERNAL, MODEL, STRATEGY


@dataclass(frozen=True)
class Stage:
    job: str
    assets: tuple[str, ...]
    partitioning: str | None  # the partition dimension its runs take one key of; None: unpartitioned
    description: str


STAGES: tuple[Stage, ...] = (
    Stage("evaluation_inputs", ("corpus_snapshot", "extracted_text", "eval_set"), None,
          "Snapshot, extract and check the evaluation set."),
    Stage("chunking", ("chunks", "chunk_quality", "lexical_runs"), STRATEGY,
          "One chunking strategy: its chunks, what it costs, and every query through BM25 (once, for every model)."),
    Stage("model_partition", ("embeddings", "retrieval_runs", "refusal_calibration"), MODEL,
          "One model x strategy: embeddings, every query through every retriever, and when to refuse."),
    Stage("external_partition", ("external_runs",), EXTERNAL,
          "One external retriever: every query asked of it, judged."),
    Stage("evaluation_metrics", ("retrieval_metrics",), None,
          "Append an evaluation run of every materialised partition to DuckDB."),
)
REBUILT = STAGES[:-1]  # the stages whose stale partitions are rebuilt before an evaluation
EVALUATION = STAGES[-1]  # the stage that appends the evaluation run


def job_of(partitioning: str) -> str:
    """The job of the stage partitioned by ``partitioning``."""
    [stage] = [stage for stage in STAGES if stage.partitioning == partitioning]
    return stage.job
