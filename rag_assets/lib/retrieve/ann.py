"""Approximate dense retrieval: an HNSW graph (faiss) over the same unit vectors as ``dense``.

What a production vector index does, measured beside the exact search it approximates: the
graph is built from the stored chunk vectors with ``HNSWConfig`` (the settings ``hnsw.m``,
``hnsw.ef_construction``, ``hnsw.ef_search``), single-threaded so the same vectors always give the same
graph and the same rankings. The reported distance is ``1 - cos``, as for ``dense``, so a refusal cut
calibrates the same way. ``ann_recall`` (``evaluate.measures``) is the share of the exact top k it returns.
"""

from __future__ import annotations

import numpy as np

from rag_assets.lib.retrieve.config import HNSWParameters

HNSWConfig = HNSWParameters  # m, ef_construction, ef_search (at least k is searched)


DEFAULT = HNSWConfig()
RECALL_DEPTHS = (1, 10, 25)  # the k of the reported recall against exact search (metadata and DuckDB)


class HNSWIndex:
    """An inner-product HNSW graph over unit vectors; ``search`` gives (indices, cosines), best first."""

    def __init__(self, vectors: np.ndarray, config: HNSWConfig = DEFAULT, build_threads: int = 1) -> None:
        """``build_threads`` 1 (the retriever's) gives a deterministic graph: the same vectors, the same
        neighbours; more builds faster (bench/scale.py). Searches run on one thread either way."""
        import faiss

        faiss.omp_set_num_threads(build_threads)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.config, self.size = config, len(vectors)
        self.index = faiss.IndexHNSWFlat(vectors.shape[1] if vectors.ndim == 2 else 1, config.m,
                                         faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = config.ef_construction
        if self.size:
            self.index.add(vectors)
        faiss.omp_set_num_threads(1)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = min(k, self.size)
        if k == 0:
            empty = np.zeros((len(queries), 0))
            return empty.astype(np.int64), empty.astype(np.float32)
        self.index.hnsw.efSearch = max(self.config.ef_search, k)
        cosines, indices = self.index.search(queries, k)
        return indices.astype(np.int64), cosines.astype(np.float32)


def search(index, query: str, k: int) -> tuple[list[int], list[float], list[float]]:
    """(chunk indices, cosines, cosine distances) of the k nearest chunks the graph finds."""
    indices, cosines = index.ann.search(index.query_vector(query), k)
    found = [(int(i), float(c)) for i, c in zip(indices[0], cosines[0]) if i >= 0]
    return [i for i, _ in found], [c for _, c in found], [1.0 - c for _, c in found]


def recall_against_exact(approximate: list[list[str]], exact: list[list[str]], k: int) -> float:
    """Mean share of each query's exact top k that the approximate top k holds."""
    shares = [len(set(a[:k]) & set(e[:k])) / min(k, len(e)) for a, e in zip(approximate, exact) if e]
    return float(np.mean(shares)) if shares else 1.0
