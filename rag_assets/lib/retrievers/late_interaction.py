"""Late interaction (ColBERT-style MaxSim) with the embedding model's own contextual token vectors.

    score(q, d) = mean over query tokens i of  max over chunk tokens j of  cos(q_i, d_j)

(ColBERT sums; the mean ranks identically for one query and puts every query on one scale, so
``1 - score`` is a distance a refusal threshold can be calibrated on, like dense's ``1 - cos``.)

No extra weights: the token vectors are the embedding model's last hidden states (its static
token vectors for WordLlama), the same ones it mean-pools into the chunk vector. The embedder keeps
them from the forward pass that embedded the chunk, so a chunk embedded in the same process needs
no second pass; one taken from the embedding cache (or embedded in another process) has its
token vectors computed when it first becomes a candidate, and kept for later queries.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def maxsim(query_tokens: np.ndarray, chunk_tokens: np.ndarray) -> float:
    """The mean over query tokens of their best cosine among the chunk's tokens, in [-1, 1]."""
    if not len(query_tokens) or not len(chunk_tokens):
        return 0.0
    return float((_unit_rows(query_tokens) @ _unit_rows(chunk_tokens).T).max(axis=1).mean())


class TokenVectors:
    """Token vectors of chunks, computed on first use and kept."""

    def __init__(self, embedder, texts: Sequence[str]) -> None:
        self.embedder, self.texts, self.known = embedder, texts, {}

    def get(self, indices: Sequence[int]) -> list[np.ndarray]:
        missing = [i for i in indices if i not in self.known]
        if missing:
            for index, tokens in zip(missing, self.embedder.token_vectors([self.texts[i] for i in missing])):
                self.known[index] = tokens
        return [self.known[i] for i in indices]


def rerank(index, query: str, candidates: Sequence[int], k: int) -> tuple[list[int], list[float]]:
    query_tokens = index.embedder.token_vectors([query])[0]
    scores = [maxsim(query_tokens, tokens) for tokens in index.token_vectors.get(candidates)]
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))[:k]
    return [candidates[i] for i in order], [scores[i] for i in order]
