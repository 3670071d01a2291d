"""Dense retrieval: exact cosine top-k over L2-normalised chunk vectors.

No approximate index: one matrix product and a partial sort. With unit vectors the cosine is the
dot product, and the reported distance is ``1 - cos``.
"""

from __future__ import annotations

import numpy as np


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


def search(index, query: str, k: int) -> tuple[list[int], list[float], list[float]]:
    """(chunk indices, cosines, cosine distances) of the k nearest chunks to the query."""
    indices, cosines = dense_top_k(index.query_vector(query), index.vectors, k)
    scores = [float(c) for c in cosines[0]]
    return indices[0].tolist(), scores, [1.0 - s for s in scores]
