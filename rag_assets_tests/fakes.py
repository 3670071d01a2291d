"""A small deterministic embedder, only for tests of logic that does not depend on the model."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from rag_assets.lib.embed.vectors import l2_normalize
from rag_assets.resources import EmbeddingModels


class HashingEmbedder:
    """Bag of lower-cased words hashed into a fixed number of buckets, L2-normalised."""

    def __init__(self, key: str = "all-MiniLM-L6-v2", dimension: int = 64) -> None:
        self.key = key
        self.dimension = dimension
        self.revision = "hashing-1"
        self.window = 64
        self.special_tokens = 2

    normalized = True

    def embed_queries(self, texts):
        return self.embed(texts)

    def token_vectors(self, texts):
        """One hashed one-hot row per word."""
        out = []
        for text in texts:
            words = re.findall(r"[a-z0-9]+", text.lower()) or ["empty"]
            rows = np.zeros((len(words), self.dimension), dtype=np.float32)
            for i, word in enumerate(words):
                rows[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] = 1.0
            out.append(rows)
        return out

    def count_tokens(self, texts):
        return [len(re.findall(r"[a-z0-9]+", text.lower())) for text in texts]

    def embed(self, texts):
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension
                vectors[row, bucket] += 1.0
        vectors[:, 0] += 1e-3  # no all-zero rows
        return l2_normalize(vectors)


class FakeEmbeddingModels(EmbeddingModels):
    def get(self, key: str) -> HashingEmbedder:
        return HashingEmbedder(key)

    def installed_revision(self, key: str) -> str:
        return HashingEmbedder(key).revision
