"""Dense retrieval: exact cosine top-k over L2-normalised chunk vectors.

No approximate index: a matrix product and a partial sort, over the chunk vectors in blocks of
``block_rows`` rows, merging each block's top k into the running top k. The working memory is
about 20 bytes per query and block row (the scores, their negation, the partial sort's int64
indices), set by the ``scale_out.dense_block_rows`` setting and not by the size of the collection;
``top_k_of_blocks`` takes the blocks from anywhere (a Parquet file read a row group at a time, a
memory map). With unit vectors the cosine is the dot product, and the reported distance is
``1 - cos``.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from rag_assets.lib.retrieve.config import DENSE_BLOCK_ROWS

BLOCK_ROWS = DENSE_BLOCK_ROWS  # about 1.3 MB of working memory per query


def top_k_of_blocks(query_vectors: np.ndarray, blocks: Iterable[np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and cosines of the k nearest rows for each query, best first, over ``blocks`` (float32
    arrays of unit rows, in order: the first row of a block follows the last of the one before).

    Returns (indices, cosines) of shape (q, min(k, rows)). Ties are broken by row index, so the
    result is the same for any blocking.
    """
    queries = np.atleast_2d(np.asarray(query_vectors, dtype=np.float32))
    best = np.zeros((queries.shape[0], 0), np.int64)
    best_scores = np.zeros((queries.shape[0], 0), np.float32)
    offset = 0
    for block in blocks:
        block = np.asarray(block, dtype=np.float32)
        if not len(block) or k <= 0:
            offset += len(block)
            continue
        cosines = queries @ block.T
        keep = min(k, block.shape[0])
        if keep < block.shape[0]:
            candidates = np.argpartition(-cosines, keep - 1, axis=1)[:, :keep]
        else:
            candidates = np.broadcast_to(np.arange(block.shape[0]), cosines.shape)
        indices = np.concatenate([best, candidates + offset], axis=1)
        scores = np.concatenate([best_scores, np.take_along_axis(cosines, candidates, axis=1)], axis=1)
        order = np.lexsort((indices, -scores), axis=1)[:, :k]
        best, best_scores = np.take_along_axis(indices, order, axis=1), np.take_along_axis(scores, order, axis=1)
        offset += len(block)
    return best.astype(np.int64), best_scores.astype(np.float32)


def dense_top_k(query_vectors: np.ndarray, chunk_vectors: np.ndarray, k: int,
                block_rows: int = BLOCK_ROWS) -> tuple[np.ndarray, np.ndarray]:
    """Indices and cosines of the k nearest chunks for each query, best first, scored ``block_rows``
    chunks at a time. Both inputs are float32 arrays of unit rows; see ``top_k_of_blocks``."""
    if block_rows < 1:
        raise ValueError(f"block_rows must be at least 1, not {block_rows}")
    chunks = np.asarray(chunk_vectors, dtype=np.float32)
    return top_k_of_blocks(query_vectors, (chunks[start:start + block_rows]
                                           for start in range(0, chunks.shape[0], block_rows)), k)


def search(index, query: str, k: int) -> tuple[list[int], list[float], list[float]]:
    """(chunk indices, cosines, cosine distances) of the k nearest chunks to the query."""
    indices, cosines = dense_top_k(index.query_vector(query), index.vectors, k, index.dense_block_rows)
    scores = [float(c) for c in cosines[0]]
    return indices[0].tolist(), scores, [1.0 - s for s in scores]
