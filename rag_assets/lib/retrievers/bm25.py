"""Okapi BM25 over the chunks' embedded text.

    score(q, d) = sum over query tokens t of  idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))

with k1 = 1.2, b = 0.75, N chunks, n(t) chunks holding t, |d| the chunk's length in tokens and
avgdl the mean length. Tokens are lower-cased runs of letters and digits; a query token repeated
counts each time (as in rank_bm25). The per-term document weights are precomputed into one sparse
matrix, so a query is a sum of a few of its columns.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
from scipy import sparse

TOKEN = re.compile(r"[^\W_]+")
K1, B = 1.2, 0.75


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class BM25:
    def __init__(self, texts: Sequence[str], k1: float = K1, b: float = B) -> None:
        self.vocabulary: dict[str, int] = {}
        rows, columns, counts, lengths = [], [], [], []
        for row, text in enumerate(texts):
            tokens = tokenize(text)
            lengths.append(len(tokens))
            frequencies: dict[int, int] = {}
            for token in tokens:
                column = self.vocabulary.setdefault(token, len(self.vocabulary))
                frequencies[column] = frequencies.get(column, 0) + 1
            rows += [row] * len(frequencies)
            columns += list(frequencies)
            counts += list(frequencies.values())
        n_docs = len(texts)
        tf = sparse.csr_matrix((np.array(counts, dtype=np.float64), (rows, columns)),
                               shape=(n_docs, max(len(self.vocabulary), 1)))
        document_frequency = np.bincount(columns, minlength=tf.shape[1]).astype(np.float64)
        self.idf = np.log(1 + (n_docs - document_frequency + 0.5) / (document_frequency + 0.5))
        length = np.array(lengths, dtype=np.float64)
        average = length.mean() if n_docs and length.mean() > 0 else 1.0
        norm = k1 * (1 - b + b * length / average)  # per document
        tf = tf.tocoo()
        weights = self.idf[tf.col] * tf.data * (k1 + 1) / (tf.data + norm[tf.row])
        self.weights = sparse.csc_matrix((weights, (tf.row, tf.col)), shape=tf.shape)
        self.n_docs = n_docs

    def scores(self, query: str) -> np.ndarray:
        columns = [self.vocabulary[token] for token in tokenize(query) if token in self.vocabulary]
        if not columns:
            return np.zeros(self.n_docs)
        return np.asarray(self.weights[:, columns].sum(axis=1)).ravel()

    def top_k(self, query: str, k: int) -> tuple[list[int], list[float]]:
        """Indices and scores of the k best chunks; ties by index; chunks scoring 0 are not returned."""
        scores = self.scores(query)
        k = min(k, int(np.count_nonzero(scores)))
        if k == 0:
            return [], []
        candidates = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        order = np.lexsort((candidates, -scores[candidates]))
        best = candidates[order][:k]
        return best.tolist(), scores[best].tolist()


def search(index, query: str, k: int) -> tuple[list[int], list[float], None]:
    return *index.bm25.top_k(query, k), None
