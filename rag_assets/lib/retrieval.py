"""Dense retrieval: exact cosine top-k over L2-normalised chunk vectors.

No approximate index: one matrix product and a partial sort. With unit vectors the cosine is the
dot product, and the reported distance is ``1 - cos``.
"""

from __future__ import annotations

import time
from typing import Callable, Mapping, Sequence

import numpy as np

from rag_assets.lib.evalset import DOCUMENT, NEEDLE, Query


def dense_top_k(query_vectors: np.ndarray, chunk_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and cosines of the k nearest chunks for each query, best first.

    Both inputs are float32 arrays of unit rows; returns (indices, cosines) of shape (q, min(k, n)).
    Ties are broken by chunk index, so results are deterministic.
    """
    queries = np.atleast_2d(np.asarray(query_vectors, dtype=np.float32))
    chunks = np.asarray(chunk_vectors, dtype=np.float32)
    k = min(k, chunks.shape[0])
    if k == 0:
        empty = np.zeros((queries.shape[0], 0))
        return empty.astype(np.int64), empty.astype(np.float32)
    cosines = queries @ chunks.T
    if k < chunks.shape[0]:
        candidates = np.argpartition(-cosines, k - 1, axis=1)[:, :k]
    else:
        candidates = np.broadcast_to(np.arange(chunks.shape[0]), cosines.shape)
    candidate_scores = np.take_along_axis(cosines, candidates, axis=1)
    order = np.lexsort((candidates, -candidate_scores), axis=1)
    indices = np.take_along_axis(candidates, order, axis=1)
    return indices.astype(np.int64), np.take_along_axis(cosines, indices, axis=1)


def first_hit_rank(ranked_chunk_ids: list[str], holders: set[str]) -> int | None:
    """1-based rank of the first chunk that holds the needle; None for a miss (never dropped)."""
    for rank, chunk in enumerate(ranked_chunk_ids, start=1):
        if chunk in holders:
            return rank
    return None


def document_ranking(ranked_chunk_ids: Sequence[str], chunk_doc: Mapping[str, str]) -> list[str]:
    """Chunk ranks rolled up to document ranks: each document ranks where its best chunk does."""
    seen: dict[str, None] = {}
    for chunk in ranked_chunk_ids:
        seen.setdefault(chunk_doc[chunk], None)
    return list(seen)


def judge(
    query: Query, ranked_chunk_ids: Sequence[str], holders: set[str], chunk_doc: Mapping[str, str]
) -> dict:
    """Where the relevant items of one query landed in one ranked list.

    For a needle query the items are the chunks holding the needle whole (``holders``); for a
    document query, the relevant documents in the rolled-up document ranking. ``hit_rank`` is the
    first such rank or None; ``relevant_ranks`` every such rank within the list; ``relevant_total``
    how many relevant items exist at all (the ideal list for nDCG). Out-of-domain queries have none.
    """
    if query.query_kind == NEEDLE:
        ranks = [rank for rank, chunk in enumerate(ranked_chunk_ids, start=1) if chunk in holders]
        total = len(holders)
    elif query.query_kind == DOCUMENT:
        relevant = set(query.relevant_doc_ids)
        ranking = document_ranking(ranked_chunk_ids, chunk_doc)
        ranks = [rank for rank, doc in enumerate(ranking, start=1) if doc in relevant]
        total = len(relevant)
    else:
        ranks, total = [], 0
    return {"hit_rank": ranks[0] if ranks else None, "relevant_ranks": ranks, "relevant_total": total}


def run_dense(
    queries: Sequence[Query],
    embed: Callable[[list[str]], np.ndarray],
    chunk_ids: Sequence[str],
    chunk_vectors: np.ndarray,
    k: int,
) -> list[dict]:
    """One row per query: the ranked top k with cosines and distances, and the latency.

    Latency is measured per query and includes embedding the query.
    """
    rows = []
    for query in queries:
        started = time.perf_counter()
        indices, cosines = dense_top_k(embed([query.text]), chunk_vectors, k)
        latency_ms = (time.perf_counter() - started) * 1000.0
        scores = [float(c) for c in cosines[0]]
        rows.append(
            {
                "query_id": query.query_id,
                "retriever": "dense",
                "chunk_ids": [chunk_ids[i] for i in indices[0]],
                "scores": scores,
                "distances": [1.0 - s for s in scores],
                "latency_ms": latency_ms,
            }
        )
    return rows
