"""Late interaction (ColBERT-style MaxSim) with the embedding model's own contextual token vectors.

    score(q, d) = mean over query tokens i of  max over chunk tokens j of  cos(q_i, d_j)

(ColBERT sums; the mean ranks identically for one query and puts every query on one scale, so
``1 - score`` is a distance a refusal threshold can be calibrated on, like dense's ``1 - cos``.)

No extra weights: the token vectors are the embedding model's last hidden states (its static
token vectors for WordLlama), the same ones it mean-pools into the chunk vector. The embedder keeps
them from the forward pass that embedded the chunk, so a chunk embedded in the same process needs
no second pass; one taken from the embedding cache (or embedded in another process) has its
token vectors computed when it first becomes a candidate, and kept for later queries. They are
stored in float16 beside the embedding cache (``TokenVectorCache``), so another run or process
reads them back instead of running the model again; they are rounded to float16 however they were
obtained, so a score never depends on whether the cache was warm.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from rag_assets.lib.embed.cache import TOKEN_DTYPE, TokenVectorCache, text_hash


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def maxsim(query_tokens: np.ndarray, chunk_tokens: np.ndarray) -> float:
    """The mean over query tokens of their best cosine among the chunk's tokens, in [-1, 1]."""
    if not len(query_tokens) or not len(chunk_tokens):
        return 0.0
    return float((_unit_rows(query_tokens) @ _unit_rows(chunk_tokens).T).max(axis=1).mean())


class TokenVectors:
    """Token vectors of an index's chunks, obtained on first use and kept, rounded to float16.

    With a ``TokenVectorCache``, the first use reads every chunk's vectors stored by an earlier run
    (of this model revision, in any process), what a run over many queries needs; with
    ``read_all=False`` (one question at a time, as ``ask`` does) each use reads only the vectors of
    the chunks it asks for that were not read before. ``save()`` stores the ones computed since.
    """

    def __init__(self, embedder, texts: Sequence[str], cache: TokenVectorCache | None = None,
                 read_all: bool = True) -> None:
        self.embedder, self.texts, self.cache, self.known = embedder, texts, cache, {}
        self.read_all = read_all
        self.hashes: list[str] | None = None
        self.looked_up: set[int] = set()
        self.computed: dict[int, np.ndarray] = {}
        self.reused = 0

    def _read(self, indices: Sequence[int]) -> None:
        """The stored vectors of the chunks at ``indices`` not looked up before, into ``known``."""
        if self.hashes is None:
            self.hashes = [text_hash(text) for text in self.texts]
        unread = [index for index in dict.fromkeys(indices) if index not in self.looked_up]
        self.looked_up.update(unread)
        if self.cache is None or not unread:
            return
        stored = self.cache.lookup([self.hashes[index] for index in unread])
        for index in unread:
            if self.hashes[index] in stored:
                self.known[index] = stored[self.hashes[index]]
                self.reused += 1

    def get(self, indices: Sequence[int]) -> list[np.ndarray]:
        if self.read_all and self.hashes is None:
            self._read(range(len(self.texts)))
        self._read([i for i in indices if i not in self.known])
        missing = list(dict.fromkeys(i for i in indices if i not in self.known))
        if missing:
            for index, tokens in zip(missing, self.embedder.token_vectors([self.texts[i] for i in missing])):
                self.known[index] = self.computed[index] = np.asarray(tokens, dtype=TOKEN_DTYPE)
        return [self.known[i] for i in indices]

    def save(self) -> int:
        """Store the token vectors computed since the last save; how many there were."""
        if self.cache is None or not self.computed:
            return 0
        self.cache.add({self.hashes[index]: tokens for index, tokens in self.computed.items()})
        count, self.computed = len(self.computed), {}
        return count


def rerank(index, query: str, candidates: Sequence[int], k: int) -> tuple[list[int], list[float]]:
    query_tokens = index.embedder.token_vectors([query])[0]
    scores = [maxsim(query_tokens, tokens) for tokens in index.token_vectors.get(candidates)]
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))[:k]
    return [candidates[i] for i in order], [scores[i] for i in order]
