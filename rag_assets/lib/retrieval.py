"""Dense retrieval: exact cosine top-k over L2-normalised chunk vectors.

No approximate index: one matrix product and a partial sort. With unit vectors the cosine is the
dot product, and the reported distance is ``1 - cos``.
"""

from __future__ import annotations

import time
from typing import Callable, Mapping, Sequence

import numpy as np

from rag_assets.lib.evalset import Query


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


def run_dense(
    queries: Sequence[Query],
    embed: Callable[[list[str]], np.ndarray],
    chunk_ids: Sequence[str],
    chunk_vectors: np.ndarray,
    holders: Mapping[str, set[str]],
    k: int,
) -> list[dict]:
    """One row per query: the ranked top k with cosines and distances, the hit rank, the latency.

    Latency is measured per query and includes embedding the query.
    """
    rows = []
    for query in queries:
        started = time.perf_counter()
        indices, cosines = dense_top_k(embed([query.text]), chunk_vectors, k)
        latency_ms = (time.perf_counter() - started) * 1000.0
        ranked = [chunk_ids[i] for i in indices[0]]
        scores = [float(c) for c in cosines[0]]
        rows.append(
            {
                "query_id": query.query_id,
                "needle_id": query.needle_id,
                "phrasing": query.phrasing,
                "retriever": "dense",
                "chunk_ids": ranked,
                "scores": scores,
                "distances": [1.0 - s for s in scores],
                "hit_rank": first_hit_rank(ranked, holders.get(query.needle_id, set())),
                "latency_ms": latency_ms,
            }
        )
    return rows
