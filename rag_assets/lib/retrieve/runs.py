"""One model x strategy partition of retrieval rows: every query of the evaluation set against the
index, judged, and stamped with what built the index.

The index must be the one the model and chunks in hand would build: built with other weights or
for other chunks, it is refused (``IndexMismatch``) with the partition to re-materialise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

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
from rag_assets.lib.retrieve.engine import RETRIEVERS, Index, available, run_retrievers, unknown
from rag_assets.lib.store.schemas import (
    QUERY_COLUMNS,
    RETRIEVAL_RUNS,
    STAMP_FIELDS,
    table_from_rows,
)


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


def retrieve_and_judge(
    eval_set: pa.Table, extracted_text: pa.Table, chunks: pa.Table, embeddings: pa.Table, embedder: Embedder,
    retrievers: Sequence[str], top_k: int, cross_encoder_folder: str = "", partition: str = "",
    bm25_config: BM25Config = BM25_DEFAULT, home: Path | None = None, ann_config: HNSWConfig = ANN_DEFAULT,
    dense_block_rows: int = DENSE_BLOCK_ROWS,
) -> tuple[pa.Table, dict]:
    """(one row per query and retriever, the partition's figures).

    With ``home``, late interaction's token vectors are read from and stored in its token cache.
    """
    if unknown(retrievers):
        raise ValueError(f"unknown retriever(s) {', '.join(unknown(retrievers))} in the evaluation.retrievers setting; "
                         f"the retrievers are {', '.join(RETRIEVERS)}")
    check_index(embeddings, chunks, embedder, partition)
    queries = queries_from_rows(eval_set.to_pylist())
    documents = canonical_texts(extracted_text.to_pylist())
    chunk_rows = chunks.select(["chunk_id", "doc_id", "start", "end"]).to_pylist()
    by_doc = chunks_by_document(chunk_rows)
    chunk_doc = {row["chunk_id"]: row["doc_id"] for row in chunk_rows}
    holders = {q.query_id: span_holders(q.spans, by_doc, documents) for q in queries if q.query_kind == NEEDLE}
    index = Index(chunk_ids=embeddings.column("chunk_id").to_pylist(), texts=chunks.column("text").to_pylist(),
                  vectors=vectors_of(embeddings, embedder.dimension), embedder=embedder,
                  cross_encoder=cross_encoder.load(cross_encoder_folder) if cross_encoder_folder else None,
                  bm25_config=bm25_config, ann_config=ann_config, dense_block_rows=dense_block_rows,
                  token_cache=token_cache(home, embedder) if home else None)
    ran = available(index, retrievers)
    runs = run_retrievers(queries, index, top_k, ran)
    token_figures = index.save_token_vectors()
    tokens = dict(zip(chunks.column("chunk_id").to_pylist(), count_tokens(chunks.column("content").to_pylist())))
    by_query = {q.query_id: q for q in queries}
    by_id = {row["query_id"]: row for row in eval_set.select(QUERY_COLUMNS).to_pylist()}
    stamp = {field: embeddings.column(field)[0].as_py() if len(embeddings) else None for field in STAMP_FIELDS}
    rows = [
        by_id[run["query_id"]] | run | context_columns([tokens[chunk_id] for chunk_id in run["chunk_ids"]])
        | judge(by_query[run["query_id"]], run["chunk_ids"], holders.get(run["query_id"], set()), chunk_doc) | stamp
        for run in runs
    ]
    figures = _figures(rows, queries, ran, retrievers, top_k) | {"bm25": bm25_config.model_dump()} | token_figures
    if "ann" in ran and "dense" in ran:
        figures |= {"ann": ann_config.model_dump()} | ann_recall(rows)
    return table_from_rows(RETRIEVAL_RUNS, rows, "retrieval_runs"), figures


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
