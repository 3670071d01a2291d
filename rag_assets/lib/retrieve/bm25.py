"""Okapi BM25 over the chunks' embedded text.

    score(q, d) = sum over query tokens t of  idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))

with k1 = 1.2, b = 0.75 by default (``BM25Config``), N chunks, n(t) chunks holding t, |d| the chunk's
length in tokens and avgdl the mean length. Tokens are runs of letters and digits, lower-cased by
default; optionally English stop words are dropped (Lucene's default English stop set, the one
Anserini and bm25s use) and tokens are stemmed with PyStemmer's Snowball stemmer. A query token
repeated counts each time (as in rank_bm25). The per-term document weights are precomputed into one
sparse matrix, so a query is a sum of a few of its columns.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Sequence

import numpy as np
from scipy import sparse

from rag_assets.lib.retrieve.config import BM25Parameters

TOKEN = re.compile(r"[^\W_]+")
# Lucene's EnglishAnalyzer default stop set (also Anserini's and bm25s's "en")
ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split())


class BM25Config(BM25Parameters):
    """The parameters (``config.BM25Parameters``) and the tokenizer they make."""

    def __init__(self, **values) -> None:
        if values.get("stopwords", "none") not in ("none", "english"):
            raise ValueError(f"BM25 stop words {values['stopwords']!r}: use 'none' or 'english'")
        super().__init__(**values)

    @classmethod
    def of(cls, parameters: BM25Parameters) -> BM25Config:
        """The configuration of these parameters (a settings group, a run's config)."""
        return cls(**parameters.model_dump())

    @cached_property
    def _stem(self):
        if self.stemmer == "none":
            return None
        import Stemmer  # PyStemmer: the Snowball stemmers

        try:
            return Stemmer.Stemmer(self.stemmer).stemWords
        except KeyError as error:
            raise ValueError(f"BM25 stemmer {self.stemmer!r}: not a Snowball language of PyStemmer") from error

    def tokenize(self, text: str) -> list[str]:
        tokens = TOKEN.findall(text.lower() if self.lowercase else text)
        if self.stopwords == "english":
            tokens = [t for t in tokens if t.lower() not in ENGLISH_STOP_WORDS]
        return self._stem(tokens) if self._stem else tokens


DEFAULT = BM25Config()


def tokenize(text: str) -> list[str]:
    return DEFAULT.tokenize(text)


class BM25:
    def __init__(self, texts: Sequence[str], config: BM25Config = DEFAULT) -> None:
        self.config = config
        k1, b = config.k1, config.b
        self.vocabulary: dict[str, int] = {}
        rows, columns, counts, lengths = [], [], [], []
        for row, text in enumerate(texts):
            tokens = config.tokenize(text)
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
        columns = [self.vocabulary[token] for token in self.config.tokenize(query) if token in self.vocabulary]
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
