"""An external retriever's answers judged by the needle rule into the retrieval rows' columns: a hit is
correct when it is located in the corpus and the folded needle lies in its text, in the needle's document;
a query that erred is a miss with its error, and too many errors fail the run."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rag_assets.lib.ingest.folding import fold
from rag_assets.lib.retrieve.context import context_columns, count_tokens
from rag_assets.lib.retrieve.external.asking import Answered
from rag_assets.lib.retrieve.external.hits import ExternalRetrieverError, Hit
from rag_assets.lib.retrieve.external.locate import Located, Locator

MAX_ERROR_SHARE = 0.2  # a run where more queries than this share erred is failed, not recorded


def hit_holds(hit: Hit, located: Located, spans: Sequence[tuple[str, str]]) -> bool:
    """The needle rule on a returned passage: located in the corpus, and the folded needle lies in its
    text, in the needle's document. A hit that cannot be located is never correct."""
    if located.doc_id is None:
        return False
    text = fold(hit.text)
    return any(fold(needle) in text and located.doc_id == doc_id for doc_id, needle in spans)


def hit_id(key: str, rank: int, located: Located) -> str:
    """A hit's id in the rows: its locator in the corpus (``doc#char=start,end``), else ``key:unlocated:rank``."""
    if located.doc_id is None:
        return f"{key}:unlocated:{rank}"
    return f"{located.doc_id}#char={located.start},{located.end}"


def failure_of(key: str, answered: Sequence[Answered], max_error_share: float = MAX_ERROR_SHARE) -> str | None:
    """Why the retriever's run fails, when more than ``max_error_share`` of its queries erred: one paragraph
    naming the retriever, the errors by kind (most first) and an example; else None."""
    errors = [a for a in answered if a.error]
    if not answered or len(errors) / len(answered) <= max_error_share:
        return None
    kinds: dict[str, int] = {}
    for failure in errors:
        kinds[failure.error.split(" (")[0]] = kinds.get(failure.error.split(" (")[0], 0) + 1
    return (f"retriever {key!r} failed {len(errors)} of {len(answered)} queries (more than {max_error_share:.0%}): "
            + ", ".join(f"{count} x {kind}" for kind, count in sorted(kinds.items(), key=lambda i: -i[1]))
            + f"; for example query {errors[0].query_id}: {errors[0].error}. Nothing was recorded for it")


def external_rows(key: str, answered: Sequence[Answered], eval_rows: Sequence[Mapping], documents: Mapping[str, str],
                  stamp: Mapping[str, Any], max_error_share: float = MAX_ERROR_SHARE) -> tuple[list[dict], dict]:
    """(one row per query, in the retrieval rows' columns, judged by the needle rule; the run's figures).

    ExternalRetrieverError when more than ``max_error_share`` of the queries erred: one paragraph naming
    the retriever, the errors by kind and an example."""
    from rag_assets.lib.evalsets.judging import judge
    from rag_assets.lib.evalsets.queries import NEEDLE, OUT_OF_DOMAIN, queries_from_rows

    failed = failure_of(key, answered, max_error_share)
    if failed:
        raise ExternalRetrieverError(failed)
    errors = [a for a in answered if a.error]
    queries = {q.query_id: q for q in queries_from_rows(eval_rows)}
    by_id = {row["query_id"]: row for row in eval_rows}
    locator = Locator(documents)
    rows, unlocated, approximate = [], 0, 0
    for answer in answered:
        query = queries[answer.query_id]
        placed = [locator.locate(hit) for hit in answer.hits]
        ids = [hit_id(key, rank, where) for rank, where in enumerate(placed, start=1)]
        unlocated += sum(where.doc_id is None for where in placed)
        approximate += sum(where.doc_id is not None and where.ratio < 1.0 for where in placed)
        holders = {i for i, hit, where in zip(ids, answer.hits, placed) if hit_holds(hit, where, query.spans)} \
            if query.query_kind == NEEDLE else set()
        distances = [hit.distance for hit in answer.hits]
        scores = [hit.score if hit.score is not None else -(hit.distance or 0.0) for hit in answer.hits]
        row = {column: by_id[answer.query_id].get(column) for column in
               ("query_id", "needle_id", "phrasing", "query_kind", "kind", "eval_version", "eval_hash")}
        rows.append(row | {
            "retriever": key, "chunk_ids": ids, "scores": scores,
            "distances": distances if answer.hits and all(d is not None for d in distances) else None,
            "latency_ms": answer.latency_ms, "stage_ms": answer.latency_ms, "error": answer.error,
            "located_ratios": [where.ratio for where in placed],
        } | context_columns(count_tokens([hit.text for hit in answer.hits]))
            | judge(query, ids, holders, {i: where.doc_id for i, where in zip(ids, placed) if where.doc_id}) | dict(stamp))
    judged = [r for r in rows if r["query_kind"] != OUT_OF_DOMAIN]
    figures = {"queries": len(rows), "errors": len(errors), "hits_unlocated": unlocated,
               "hits_located_approximately": approximate,
               "hits_in_top_k": sum(r["hit_rank"] is not None for r in judged),
               "median_latency_ms": round(sorted(a.latency_ms for a in answered)[len(answered) // 2], 2) if answered else 0.0,
               "error_examples": [f"{a.query_id}: {a.error}" for a in errors[:3]]}
    return rows, figures
