"""Retrieval rows: every query of the evaluation set against the index, judged, and stamped with what built
the index. One model x strategy partition (``retrieve_and_judge``) for the retrievers that use the model, and
one strategy partition (``retrieve_and_judge_lexical``) for those that do not (BM25), whose rankings every model partition
of the strategy is given (``given_rankings``) for its fusions and rerankers.

The index must be the one the model and chunks in hand would build: built with other weights or
for other chunks, it is refused (``IndexMismatch``) with the partition to re-materialise.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from rag_assets.lib.embed.partition import token_cache, vectors_of
from rag_assets.lib.embed.spec import Embedder
from rag_assets.lib.evalsets.judging import chunks_by_document, judge, span_holders
from rag_assets.lib.evalsets.queries import NEEDLE, OUT_OF_DOMAIN, queries_from_rows
from rag_assets.lib.ingest.documents import canonical_texts
from rag_assets.lib.retrieve import cross_encoder
from rag_assets.lib.retrieve.ann import DEFAULT as ANN_DEFAULT
from rag_assets.lib.retrieve.ann import RECALL_DEPTHS, HNSWConfig, recall_against_exact
from rag_assets.lib.retrieve.bm25 import DEFAULT as BM25_DEFAULT
from rag_assets.lib.retrieve.bm25 import BM25Config
from rag_assets.lib.retrieve.context import context_columns, count_tokens
from rag_assets.lib.retrieve.dense import BLOCK_ROWS as DENSE_BLOCK_ROWS
from rag_assets.lib.retrieve.engine import (
    FUSION_DEPTH,
    RETRIEVERS,
    Given,
    Index,
    StaleRanking,
    available,
    lexical_index,
    model_free,
    needed_by,
    run_retrievers,
    unknown,
)
from rag_assets.lib.store.schemas import (
    LEXICAL_RUNS,
    QUERY_COLUMNS,
    RETRIEVAL_RUNS,
    STAMP_FIELDS,
    table_from_rows,
)
from rag_assets.lib.store.stamps import PIPELINE_VERSION


class IndexMismatch(ValueError):
    """The stored index was not built from the model or chunks in hand; the message says what to rebuild."""


def check_index(embeddings: pa.Table, chunks: pa.Table, embedder: Embedder, partition: str) -> None:
    index_revision = embeddings.column("revision")[0].as_py() if len(embeddings) else embedder.revision
    if index_revision != embedder.revision:
        raise IndexMismatch(
            f"index of {embedder.key} was built with weights {index_revision}, the model loaded now is "
            f"{embedder.revision}: re-materialise embeddings for {partition}")
    if embeddings.column("chunk_id").to_pylist() != chunks.column("chunk_id").to_pylist():
        raise IndexMismatch(f"embeddings {partition} do not match the current chunks: re-materialise them")


def retrieve_and_judge_lexical(
    eval_set: pa.Table, extracted_text: pa.Table, chunks: pa.Table, retrievers: Sequence[str], top_k: int,
    strategy: str, chunks_version: str, bm25_config: BM25Config = BM25_DEFAULT,
) -> tuple[pa.Table, dict]:
    """(one row per query and model-free retriever, the partition's figures): the retrievers that use no
    embedding model (BM25) among those asked or built on by one asked, run once for the strategy, judged, and
    each ranking kept to the depth the model partitions' fusions and rerankers read (``given_rankings``)."""
    _refuse_unknown(retrievers)
    names = [name for name in needed_by(list(retrievers) or list(RETRIEVERS)) if name in model_free()]
    queries = queries_from_rows(eval_set.to_pylist())
    started = time.perf_counter()
    index = lexical_index(chunks.column("chunk_id").to_pylist(), chunks.column("text").to_pylist(), bm25_config)
    if "bm25" in names:
        index.bm25  # noqa: B018 (built here, so that its time is counted apart from the queries')
    index_seconds = time.perf_counter() - started
    depth = max(top_k, FUSION_DEPTH)
    runs = run_retrievers(queries, index, depth, names) if names else []
    first = chunks.slice(0, 1).to_pylist()[0] if len(chunks) else {}
    parameters = json.dumps(bm25_config.model_dump(), sort_keys=True)
    stamps = {name: {"model": name, "revision": None, "dimension": None, "normalized": None,
                     "pipeline_version": PIPELINE_VERSION, "extractor_version": first.get("extractor_version"),
                     "snapshot_id": first.get("snapshot_id"), "strategy": strategy} for name in names}
    deep = [{"ranked_chunk_ids": run["chunk_ids"], "ranked_scores": run["scores"], "ranked_distances": run["distances"],
             "chunks_version": chunks_version, "parameters": parameters} for run in runs]
    for run in runs:
        run.update(chunk_ids=run["chunk_ids"][:top_k], scores=run["scores"][:top_k],
                   distances=run["distances"][:top_k] if run["distances"] is not None else None)
    rows = [row | extra for row, extra in zip(_judged(runs, queries, eval_set, extracted_text, chunks,
                                                      lambda run: stamps[run["retriever"]]), deep)]
    figures = _figures(rows, queries, names, names, top_k) | {
        "bm25": bm25_config.model_dump(), "index_seconds": round(index_seconds, 3),
        "query_seconds": round(sum(run["stage_ms"] for run in runs) / 1000.0, 3)}
    return table_from_rows(LEXICAL_RUNS, rows, "lexical_runs"), figures


def given_rankings(lexical: pa.Table, eval_set: pa.Table, chunks_version: str, bm25_config: BM25Config,
                   source: str) -> dict[str, dict[str, Given]]:
    """{retriever: {query id: its ranking}} of a ``lexical_runs`` partition, for the model partitions of its
    strategy. ``StaleRanking`` naming ``source`` when it was computed for another evaluation set, other chunks
    or other BM25 parameters than those in hand."""
    if not len(lexical):
        return {}
    rows = lexical.select(["query_id", "retriever", "eval_hash", "ranked_chunk_ids", "ranked_scores",
                           "ranked_distances", "stage_ms", "chunks_version", "parameters"]).to_pylist()
    expected = {"eval_hash": eval_set.column("eval_hash")[0].as_py() if len(eval_set) else None,
                "chunks_version": chunks_version, "parameters": json.dumps(bm25_config.model_dump(), sort_keys=True)}
    what = {"eval_hash": "another evaluation set", "chunks_version": "other chunks", "parameters": "other BM25 parameters"}
    for field, value in expected.items():
        found = {row[field] for row in rows}
        if found != {value}:
            raise StaleRanking(f"{source} were computed for {what[field]} ({field} {', '.join(sorted(map(str, found)))}, "
                               f"the one in hand is {value}): rebuild them first")
    given: dict[str, dict[str, Given]] = {}
    for row in rows:
        given.setdefault(row["retriever"], {})[row["query_id"]] = Given(
            row["ranked_chunk_ids"], row["ranked_scores"], row["ranked_distances"], row["stage_ms"])
    return given


def retrieve_and_judge(
    eval_set: pa.Table, extracted_text: pa.Table, chunks: pa.Table, embeddings: pa.Table, embedder: Embedder,
    retrievers: Sequence[str], top_k: int, cross_encoder_folder: str = "", partition: str = "",
    bm25_config: BM25Config = BM25_DEFAULT, home: Path | None = None, ann_config: HNSWConfig = ANN_DEFAULT,
    dense_block_rows: int = DENSE_BLOCK_ROWS, given: Mapping[str, Mapping[str, Given]] | None = None,
    source: str = "the given rankings",
) -> tuple[pa.Table, dict]:
    """(one row per query and retriever, the partition's figures).

    With ``given`` (``given_rankings`` of the strategy's ``lexical_runs``, possibly empty), the retrievers that use
    no embedding model have no rows here (they are recorded once per strategy) and those given are not run: they
    are the inputs of the fusions and rerankers that build on them. Without it, every asked retriever runs here. With ``home``, late interaction's token vectors are read
    from and stored in its token cache.
    """
    _refuse_unknown(retrievers)
    check_index(embeddings, chunks, embedder, partition)
    queries = queries_from_rows(eval_set.to_pylist())
    index = Index(chunk_ids=embeddings.column("chunk_id").to_pylist(), texts=chunks.column("text").to_pylist(),
                  vectors=vectors_of(embeddings, embedder.dimension), embedder=embedder,
                  cross_encoder=cross_encoder.load(cross_encoder_folder) if cross_encoder_folder else None,
                  bm25_config=bm25_config, ann_config=ann_config, dense_block_rows=dense_block_rows,
                  token_cache=token_cache(home, embedder) if home else None)
    elsewhere = given is not None  # the model-free retrievers are recorded by lexical_runs
    ran = [name for name in available(index, retrievers) if not (elsewhere and name in model_free())]
    runs = run_retrievers(queries, index, top_k, ran, given, source) if ran else []
    token_figures = index.save_token_vectors()
    stamp = {field: embeddings.column(field)[0].as_py() if len(embeddings) else None for field in STAMP_FIELDS}
    rows = _judged(runs, queries, eval_set, extracted_text, chunks, lambda run: stamp)
    asked = [name for name in (retrievers or RETRIEVERS) if not (elsewhere and name in model_free())]
    figures = _figures(rows, queries, ran, asked, top_k) | {"bm25": bm25_config.model_dump()} | token_figures
    if given:
        figures["rankings_given"] = sorted(given)
    if "ann" in ran and "dense" in ran:
        figures |= {"ann": ann_config.model_dump()} | ann_recall(rows)
    return table_from_rows(RETRIEVAL_RUNS, rows, "retrieval_runs"), figures


def _refuse_unknown(retrievers: Sequence[str]) -> None:
    if unknown(retrievers):
        raise ValueError(f"unknown retriever(s) {', '.join(unknown(retrievers))} in the evaluation.retrievers setting; "
                         f"the retrievers are {', '.join(RETRIEVERS)}")


def _judged(runs: list[dict], queries: list, eval_set: pa.Table, extracted_text: pa.Table, chunks: pa.Table,
            stamp_of: Callable[[dict], dict]) -> list[dict]:
    """Each run row with its query's columns, the context it puts into a prompt, its judgement and its stamp."""
    documents = canonical_texts(extracted_text.to_pylist())
    chunk_rows = chunks.select(["chunk_id", "doc_id", "start", "end"]).to_pylist()
    by_doc = chunks_by_document(chunk_rows)
    chunk_doc = {row["chunk_id"]: row["doc_id"] for row in chunk_rows}
    holders = {q.query_id: span_holders(q.spans, by_doc, documents) for q in queries if q.query_kind == NEEDLE}
    tokens = dict(zip(chunks.column("chunk_id").to_pylist(), count_tokens(chunks.column("content").to_pylist())))
    by_query = {q.query_id: q for q in queries}
    by_id = {row["query_id"]: row for row in eval_set.select(QUERY_COLUMNS).to_pylist()}
    return [
        by_id[run["query_id"]] | run | context_columns([tokens[chunk_id] for chunk_id in run["chunk_ids"]])
        | judge(by_query[run["query_id"]], run["chunk_ids"], holders.get(run["query_id"], set()), chunk_doc)
        | stamp_of(run)
        for run in runs
    ]


def ann_recall(rows: list[dict]) -> dict:
    """The share of the exact (dense) top k that the HNSW graph returns, over every query, at each k."""
    lists = {(row["query_id"], row["retriever"]): row["chunk_ids"] for row in rows}
    queries = sorted({query for query, retriever in lists if retriever == "ann"})
    approximate = [lists[(q, "ann")] for q in queries]
    exact = [lists[(q, "dense")] for q in queries]
    return {f"ann_recall_at_{k}": round(recall_against_exact(approximate, exact, k), 4) for k in RECALL_DEPTHS}


def _figures(rows: list[dict], queries: list, ran: list[str], asked: Sequence[str], top_k: int) -> dict:
    skipped = {name: RETRIEVERS[name].unavailable for name in (asked or RETRIEVERS) if name not in ran}
    judged = [row for row in rows if row["query_kind"] != OUT_OF_DOMAIN]
    hits = {
        name: {"hits": sum(r["hit_rank"] is not None for r in judged if r["retriever"] == name),
               "mean_latency_ms": round(float(np.mean([r["latency_ms"] for r in rows if r["retriever"] == name])), 3)}
        for name in ran
    }
    return {"queries": len(queries), "retrievers": ran, "retrievers_skipped": skipped,
            "judged_queries": len(judged) // max(len(ran), 1), f"hits_in_top_{top_k}": hits}
