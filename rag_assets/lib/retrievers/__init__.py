"""Retrievers, one small module each, run in registry order for every query.

- ``dense``: exact cosine over the chunk vectors (``dense.py``).
- ``bm25``: Okapi BM25 over the chunks' embedded text (``bm25.py``).
- ``hybrid``: reciprocal rank fusion of the dense and BM25 lists, each taken to ``FUSION_DEPTH``
  (``fusion.py``).
- ``late_interaction``: MaxSim over the embedding model's token vectors, re-scoring the hybrid top
  ``RERANK_DEPTH`` (``late_interaction.py``); always available.
- ``cross_encoder``: a configured CrossEncoder re-scoring the hybrid top ``RERANK_DEPTH``
  (``cross_encoder.py``); absent when none is configured.

Adding a retriever is one module and one entry in ``RETRIEVERS``. A row's ``latency_ms`` is the
whole pipeline's time for that query (a second stage includes the first), ``stage_ms`` the
retriever's own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from rag_assets.lib.retrievers import bm25, cross_encoder, dense, fusion, late_interaction

FUSION_DEPTH = 100
RERANK_DEPTH = 25


@dataclass
class Index:
    """One model x strategy index: what every retriever may use."""

    chunk_ids: list[str]
    texts: list[str]
    vectors: np.ndarray
    embedder: object
    cross_encoder: object | None = None
    _bm25: bm25.BM25 | None = field(default=None, repr=False)
    _token_vectors: late_interaction.TokenVectors | None = field(default=None, repr=False)

    @property
    def bm25(self) -> bm25.BM25:
        if self._bm25 is None:
            self._bm25 = bm25.BM25(self.texts)
        return self._bm25

    @property
    def token_vectors(self) -> late_interaction.TokenVectors:
        if self._token_vectors is None:
            self._token_vectors = late_interaction.TokenVectors(self.embedder, self.texts)
        return self._token_vectors


@dataclass(frozen=True)
class Retriever:
    name: str
    stage: str  # "first", "fusion" or "rerank"
    run: Callable
    inputs: tuple[str, ...] = ()
    available: Callable[[Index], bool] = lambda index: True


def _fuse(index: Index, query: str, lists: Sequence[list[int]], k: int):
    return fusion.reciprocal_rank_fusion(lists, k)


RETRIEVERS: dict[str, Retriever] = {
    r.name: r
    for r in (
        Retriever("dense", "first", dense.search),
        Retriever("bm25", "first", bm25.search),
        Retriever("hybrid", "fusion", _fuse, inputs=("dense", "bm25")),
        Retriever("late_interaction", "rerank", late_interaction.rerank, inputs=("hybrid",)),
        Retriever("cross_encoder", "rerank", cross_encoder.rerank, inputs=("hybrid",),
                  available=lambda index: index.cross_encoder is not None),
    )
}


def available(index: Index, names: Sequence[str] | None = None) -> list[str]:
    names = list(names or RETRIEVERS)
    return [name for name in RETRIEVERS if name in names and RETRIEVERS[name].available(index)]


def run_retrievers(queries: Sequence, index: Index, k: int, names: Sequence[str] | None = None) -> list[dict]:
    """One row per query and retriever: top-k chunk ids, scores, distances (dense), latencies."""
    names = available(index, names)
    needed = set(names)
    for name in names:  # a retriever's inputs run too, even when not reported
        needed.update(RETRIEVERS[name].inputs)
        for upstream in RETRIEVERS[name].inputs:
            needed.update(RETRIEVERS[upstream].inputs)
    rows = []
    for query in queries:
        lists: dict[str, list[int]] = {}
        results: dict[str, tuple] = {}
        elapsed: dict[str, float] = {}
        for name, retriever in RETRIEVERS.items():
            if name not in needed:
                continue
            started = time.perf_counter()
            if retriever.stage == "first":
                indices, scores, distances = retriever.run(index, query.text, max(k, FUSION_DEPTH))
            elif retriever.stage == "fusion":
                (indices, scores), distances = retriever.run(index, query.text, [lists[i] for i in retriever.inputs],
                                                             max(k, FUSION_DEPTH)), None
            else:
                indices, scores = retriever.run(index, query.text, lists[retriever.inputs[0]][:RERANK_DEPTH], k)
                distances = None
            own = (time.perf_counter() - started) * 1000.0
            elapsed[name] = own + sum(elapsed[i] for i in retriever.inputs)
            lists[name] = indices
            results[name] = (indices[:k], scores[:k], distances[:k] if distances is not None else None, own)
        for name in names:
            indices, scores, distances, own = results[name]
            rows.append({
                "query_id": query.query_id,
                "retriever": name,
                "chunk_ids": [index.chunk_ids[i] for i in indices],
                "scores": [float(s) for s in scores],
                "distances": distances,
                "latency_ms": elapsed[name],
                "stage_ms": own,
            })
    return rows
