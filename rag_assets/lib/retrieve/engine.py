"""The retrieval engine: every retriever, one small module each, run in registry order for every query.

- ``dense``: exact cosine over the chunk vectors (``dense.py``).
- ``ann``: the same cosine through an HNSW graph (faiss), as a production vector index answers
  (``ann.py``); its recall against ``dense`` is reported per configuration.
- ``bm25``: Okapi BM25 over the chunks' embedded text (``bm25.py``).
- ``hybrid``: reciprocal rank fusion of the dense and BM25 lists, each taken to ``FUSION_DEPTH``
  (``fusion.py``).
- ``late_interaction``: MaxSim over the embedding model's token vectors, re-scoring the hybrid top
  ``RERANK_DEPTH`` (``late_interaction.py``); always available.
- ``cross_encoder``: a configured CrossEncoder re-scoring the hybrid top ``RERANK_DEPTH``
  (``cross_encoder.py``); absent when none is configured.

Adding a retriever is one module and one entry in ``RETRIEVERS``; the entry carries the retriever's facts
(``uses_model``: whether its ranking depends on the embedding model; ``gated``: whether it has a distance
``ask`` may gate on; ``reranks``: whether it re-scores another's list; ``approximate``: whether it searches an
approximate index), and every list of retrievers
elsewhere (the default of the ``evaluation.retrievers`` setting, ``ask``'s, the paired comparisons') is
derived from them. A row's ``latency_ms`` is the
whole pipeline's time for that query (a second stage includes the first), ``stage_ms`` the
retriever's own.

A retriever whose ranking does not depend on the model (``model_free``: BM25) is run once per strategy
(the ``lexical_runs`` asset), and every model's partition is given its rankings (``Given``), to the depth
a fusion or a reranker reads, with the time they took: it is never run again there.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, NamedTuple, Protocol, Sequence

import numpy as np

from rag_assets.lib.embed.cache import TokenVectorCache
from rag_assets.lib.embed.spec import Embedder
from rag_assets.lib.retrieve import (
    ann,
    bm25,
    cross_encoder,
    dense,
    fusion,
    late_interaction,
)

FUSION_DEPTH = 100
RERANK_DEPTH = 25


@dataclass
class Index:
    """One model x strategy index: what every retriever may use."""

    chunk_ids: list[str]
    texts: list[str]
    vectors: np.ndarray
    embedder: Embedder | None  # None for an index only model-free retrievers use (``lexical_index``)
    cross_encoder: cross_encoder.PairScorer | None = None
    bm25_config: bm25.BM25Config = bm25.DEFAULT
    token_cache: TokenVectorCache | None = None
    ann_config: ann.HNSWConfig = ann.DEFAULT
    dense_block_rows: int = dense.BLOCK_ROWS
    read_all_token_vectors: bool = True  # False when asked one question at a time: read what each needs
    _bm25: bm25.BM25 | None = field(default=None, repr=False)
    _ann: ann.HNSWIndex | None = field(default=None, repr=False)
    _token_vectors: late_interaction.TokenVectors | None = field(default=None, repr=False)

    @property
    def bm25(self) -> bm25.BM25:
        if self._bm25 is None:
            self._bm25 = bm25.BM25(self.texts, self.bm25_config)
        return self._bm25

    @property
    def ann(self) -> ann.HNSWIndex:
        if self._ann is None:
            self._ann = ann.HNSWIndex(self.vectors, self.ann_config)
        return self._ann

    def query_vector(self, query: str) -> np.ndarray:
        """The query's vector. Embedded by each retriever that asks, so that each one's latency
        includes embedding the query, as a deployed index's would."""
        if self.embedder is None:
            raise ValueError("this index has no embedding model: only model-free retrievers run on it")
        return self.embedder.embed_queries([query])

    @property
    def positions(self) -> dict[str, int]:
        """{chunk id: its index}."""
        return {chunk_id: i for i, chunk_id in enumerate(self.chunk_ids)}

    @property
    def token_vectors(self) -> late_interaction.TokenVectors:
        if self._token_vectors is None:
            self._token_vectors = late_interaction.TokenVectors(
                self.embedder, self.texts, self.token_cache, self.read_all_token_vectors)
        return self._token_vectors

    def save_token_vectors(self) -> dict:
        """Store the token vectors late interaction computed; its figures (none if it never ran)."""
        if self._token_vectors is None:
            return {}
        stored = self._token_vectors.save()
        return {"token_vectors_reused": self._token_vectors.reused, "token_vectors_computed": stored,
                "token_cache_mb": round(self.token_cache.size_bytes() / 1e6, 1) if self.token_cache else 0.0}


class Ranking(NamedTuple):
    indices: list[int]  # chunk indices, best first
    scores: list[float]
    distances: list[float] | None  # lower is closer: dense 1 - cos, late interaction 1 - mean MaxSim


def lexical_index(chunk_ids: list[str], texts: list[str], bm25_config: bm25.BM25Config = bm25.DEFAULT) -> Index:
    """An index of the chunks for the retrievers that use no embedding model (``model_free``)."""
    return Index(chunk_ids=chunk_ids, texts=texts, vectors=np.zeros((len(chunk_ids), 0), np.float32), embedder=None,
                 bm25_config=bm25_config)


class Given(NamedTuple):
    """A ranking computed elsewhere (``lexical_runs``), by chunk id, to the depth its users read, and the
    milliseconds it took there."""

    chunk_ids: list[str]
    scores: list[float]
    distances: list[float] | None
    stage_ms: float


class StaleRanking(ValueError):
    """A given ranking was not computed for the chunks or queries in hand; the message says what to rebuild."""


class Retriever(Protocol):
    """Ranks the index's chunks for a query, from the rankings of its ``inputs`` (run first)."""

    name: str
    inputs: tuple[str, ...]
    embeds: bool  # it embeds the query or the chunks itself (``uses_model`` adds its inputs')
    gated: bool  # its ranking has a distance (lower is closer) that ``ask`` may gate on
    reranks: bool  # it re-scores the list of its one input
    unavailable: str  # why it is skipped when ``available`` is False

    def available(self, index: Index) -> bool: ...

    def rank(self, index: Index, query: str, upstream: Sequence[Ranking], k: int) -> Ranking: ...


@dataclass(frozen=True)
class FirstStage:
    """Searches the whole index, deep enough for fusion to see ``FUSION_DEPTH`` candidates."""

    name: str
    search: Callable[[Index, str, int], tuple[list[int], list[float], list[float] | None]]
    embeds: bool
    gated: bool
    inputs: tuple[str, ...] = ()
    approximate: bool = False  # it searches an approximate index (its later stages inherit it)
    reranks = False
    unavailable = "not available"

    def available(self, index: Index) -> bool:
        return True

    def rank(self, index: Index, query: str, upstream: Sequence[Ranking], k: int) -> Ranking:
        return Ranking(*self.search(index, query, max(k, FUSION_DEPTH)))


@dataclass(frozen=True)
class Fusion:
    """Reciprocal rank fusion of its inputs' rankings."""

    name: str
    inputs: tuple[str, ...]
    embeds = False
    gated = False
    reranks = False
    unavailable = "not available"

    def available(self, index: Index) -> bool:
        return True

    def rank(self, index: Index, query: str, upstream: Sequence[Ranking], k: int) -> Ranking:
        indices, scores = fusion.reciprocal_rank_fusion([r.indices for r in upstream], max(k, FUSION_DEPTH))
        return Ranking(indices, scores, None)


@dataclass(frozen=True)
class Rerank:
    """Re-scores the top ``RERANK_DEPTH`` of its one input."""

    name: str
    rerank: Callable[[Index, str, Sequence[int], int], tuple[list[int], list[float]]]
    inputs: tuple[str, ...]
    embeds: bool
    needs: Callable[[Index], bool] = lambda index: True
    unavailable: str = "not available"  # why, when ``needs`` is not met
    distance: Callable[[float], float] | None = None  # a score as a distance (lower is closer), if it has one
    reranks = True

    @property
    def gated(self) -> bool:
        return self.distance is not None

    def available(self, index: Index) -> bool:
        return self.needs(index)

    def rank(self, index: Index, query: str, upstream: Sequence[Ranking], k: int) -> Ranking:
        indices, scores = self.rerank(index, query, upstream[0].indices[:RERANK_DEPTH], k)
        return Ranking(indices, scores, [self.distance(s) for s in scores] if self.distance else None)


RETRIEVERS: dict[str, Retriever] = {
    r.name: r
    for r in (
        FirstStage("dense", dense.search, embeds=True, gated=True),
        FirstStage("ann", ann.search, embeds=True, gated=True, approximate=True),
        FirstStage("bm25", bm25.search, embeds=False, gated=False),
        Fusion("hybrid", inputs=("dense", "bm25")),
        Rerank("late_interaction", late_interaction.rerank, inputs=("hybrid",), embeds=True,
               distance=lambda score: 1.0 - score),
        Rerank("cross_encoder", cross_encoder.rerank, inputs=("hybrid",), embeds=False,
               needs=lambda index: index.cross_encoder is not None,
               unavailable="no cross encoder configured (settings.cross_encoder)"),
    )
}


def uses_model(name: str) -> bool:
    """Whether the retriever's ranking depends on the embedding model: it embeds, or an input of it does."""
    retriever = RETRIEVERS[name]
    return retriever.embeds or any(uses_model(upstream) for upstream in retriever.inputs)


def model_free() -> tuple[str, ...]:
    """The retrievers whose ranking does not depend on the embedding model (BM25): the same in every model's
    partition, so recorded once per strategy (registry order)."""
    return tuple(name for name in RETRIEVERS if not uses_model(name))


def gated() -> tuple[str, ...]:
    """The retrievers with a distance ``ask`` may gate on (registry order)."""
    return tuple(name for name, retriever in RETRIEVERS.items() if retriever.gated)


def gate_of(name: str) -> str:
    """The retriever whose distance gates ``name`` (``ask``'s cut, the refusal calibration): itself when it has
    one, else the first retriever upstream of it that has one (hybrid: dense). ValueError when none has."""
    pending = [name]
    while pending:
        current = pending.pop(0)
        if current not in RETRIEVERS:
            raise ValueError(f"unknown retriever {current!r}; the retrievers are {', '.join(RETRIEVERS)}")
        if RETRIEVERS[current].gated:
            return current
        pending += list(RETRIEVERS[current].inputs)
    raise ValueError(f"retriever {name!r} has no distance to gate on, nor has any retriever it builds on; "
                     f"use one of {', '.join(gated())}")


def rerankers() -> tuple[str, ...]:
    """The second stages: the retrievers that re-score another's list (registry order)."""
    return tuple(name for name, retriever in RETRIEVERS.items() if retriever.reranks)


def unknown(names: Sequence[str]) -> list[str]:
    """Those of ``names`` that are no registered retriever."""
    return [name for name in names if name not in RETRIEVERS]


def available(index: Index, names: Sequence[str] | None = None) -> list[str]:
    names = list(names or RETRIEVERS)
    return [name for name in RETRIEVERS if name in names and RETRIEVERS[name].available(index)]


def _needed(names: Sequence[str]) -> set[str]:
    """The retrievers to run for ``names``: they and everything upstream of them."""
    needed, pending = set(), list(names)
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            pending += RETRIEVERS[name].inputs
    return needed


def needed_by(names: Sequence[str]) -> list[str]:
    """The retrievers to run for ``names``: they and everything upstream of them (registry order)."""
    needed = _needed(names)
    return [name for name in RETRIEVERS if name in needed]


def run_retrievers(queries: Sequence, index: Index, k: int, names: Sequence[str] | None = None,
                   given: Mapping[str, Mapping[str, Given]] | None = None, source: str = "the given rankings",
                   ) -> list[dict]:
    """One row per query and retriever of ``names``: top-k chunk ids, scores, distances (dense), latencies.

    ``given`` ({retriever: {query id: Given}}) holds rankings computed elsewhere: a retriever there is not run,
    its ranking (and its time, in the latency of those that build on it) is taken as given. A given ranking
    that names a chunk the index does not hold, or lacks a query, is ``StaleRanking`` naming ``source``.
    """
    given = given or {}
    names = [name for name in available(index, names) if name not in given]
    needed = _needed(names)
    positions = index.positions if given else {}
    rows = []
    for query in queries:
        rankings: dict[str, Ranking] = {}
        own: dict[str, float] = {}
        elapsed: dict[str, float] = {}
        for name, retriever in RETRIEVERS.items():  # registry order: inputs before their users
            if name not in needed:
                continue
            if name in given:
                rankings[name], own[name] = _taken(given[name], query.query_id, name, positions, source)
            else:
                started = time.perf_counter()
                rankings[name] = retriever.rank(index, query.text, [rankings[i] for i in retriever.inputs], k)
                own[name] = (time.perf_counter() - started) * 1000.0
            elapsed[name] = own[name] + sum(elapsed[i] for i in retriever.inputs)
        for name in names:
            indices, scores, distances = rankings[name]
            rows.append({
                "query_id": query.query_id,
                "retriever": name,
                "chunk_ids": [index.chunk_ids[i] for i in indices[:k]],
                "scores": [float(s) for s in scores[:k]],
                "distances": distances[:k] if distances is not None else None,
                "latency_ms": elapsed[name],
                "stage_ms": own[name],
            })
    return rows


def _taken(rankings: Mapping[str, Given], query_id: str, name: str, positions: Mapping[str, int], source: str
           ) -> tuple[Ranking, float]:
    if query_id not in rankings:
        raise StaleRanking(f"{source} hold no {name} ranking for query {query_id}: they were computed for another "
                           f"evaluation set; rebuild them first")
    ranking = rankings[query_id]
    unknown_chunks = [chunk_id for chunk_id in ranking.chunk_ids if chunk_id not in positions]
    if unknown_chunks:
        raise StaleRanking(f"{source}: the {name} ranking of query {query_id} names chunk {unknown_chunks[0]}, which the "
                           f"index does not hold: they were computed from other chunks; rebuild them first")
    return Ranking([positions[c] for c in ranking.chunk_ids], list(ranking.scores),
                   list(ranking.distances) if ranking.distances is not None else None), ranking.stage_ms
