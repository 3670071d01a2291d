"""Stamps: what every index row was built from, so that mixing builds is an error, not a warning.

Vectors from two models, two weight revisions, two corpus snapshots or two pipeline versions are
not comparable; a half-migrated index answers with confident nonsense. Every Parquet file of
embeddings and retrieval rows, and every metrics row, carries the stamp; ``stamp_problems`` says
what disagrees.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from rag_assets.lib.store.schemas import STAMP_FIELDS

PIPELINE_VERSION = "4"  # bump when chunking, embedding, retrieval or judging logic changes what rows mean
# 2: a needle is held only by a chunk's own content (an overlap tail counted in 1)
# 3: retrieval rows carry the context tokens of what they return; chunk_quality their sizes in tokens
# 4: BM25's rows once per strategy (lexical_runs, model 'bm25'); retrieval_runs only the model's retrievers
# fields that must agree across every partition of one evaluation (per model: revision, dimension)
GLOBAL_FIELDS = ("pipeline_version", "extractor_version", "snapshot_id")
PER_MODEL_FIELDS = ("revision", "dimension", "normalized")
EXTERNAL_MODEL = "external"  # the model of an external retriever's rows: no registry entry, its own revision


def stamps_of(table) -> list[dict]:
    """The distinct stamps (STAMP_FIELDS) of a Parquet table's rows."""
    return table.select(list(STAMP_FIELDS)).group_by(list(STAMP_FIELDS)).aggregate([]).to_pylist()


def distinct_stamps(stamps: Iterable[Mapping]) -> list[dict]:
    """The distinct stamps among ``stamps`` (each a mapping of STAMP_FIELDS)."""
    return [dict(t) for t in {tuple(sorted((k, row[k]) for k in STAMP_FIELDS)) for row in stamps}]


def distinct(rows: Iterable[Mapping], field: str) -> list:
    return sorted({row[field] for row in rows}, key=str)


def stamp_problems(
    rows: list[Mapping], expected_revisions: Mapping[str, str], pipeline_version: str = PIPELINE_VERSION,
    expected: Mapping[str, object] | None = None, model_free: Iterable[str] = (),
) -> list[str]:
    """Every way the stamps of ``rows`` disagree with each other, the registry or ``expected``.

    ``rows`` are distinct stamps (one per file or partition); ``expected_revisions`` maps each model
    key to the revision of the weights installed now; ``expected`` pins other fields (the current
    snapshot id, say). ``model_free`` names the retrievers recorded under their own name in the model column
    (they use no weights: nothing to compare with the registry).
    """
    problems, model_free = [], set(model_free)
    for field in GLOBAL_FIELDS:
        values = distinct(rows, field)
        if len(values) > 1:
            problems.append(f"{field} differs between files: {', '.join(map(str, values))}")
    for model in distinct(rows, "model"):
        if model == EXTERNAL_MODEL:  # a team's retriever: its revision is its index's version, per retriever
            continue
        if model in model_free:  # BM25, recorded once per strategy: no weights
            continue
        own = [row for row in rows if row["model"] == model]
        for field in PER_MODEL_FIELDS:
            values = distinct(own, field)
            if len(values) > 1:
                problems.append(f"{model}: {field} differs between files: {', '.join(map(str, values))}")
        if model not in expected_revisions:
            problems.append(f"{model}: not in the model registry")
            continue
        stale = [row["strategy"] for row in own if row["revision"] != expected_revisions[model]]
        if stale:
            problems.append(
                f"{model}: built with weights {', '.join(distinct([r for r in own if r['strategy'] in stale], 'revision'))}"
                f" but the installed weights are {expected_revisions[model]} (strategies {', '.join(sorted(stale))}):"
                f" backfill this model")
    for row in rows:
        if row["pipeline_version"] != pipeline_version:
            problems.append(f"{row['model']} x {row['strategy']}: pipeline version {row['pipeline_version']}, "
                            f"current is {pipeline_version}")
        for field, value in (expected or {}).items():
            if row[field] != value:
                problems.append(f"{row['model']} x {row['strategy']}: {field} {row[field]}, current is {value}")
    return problems
