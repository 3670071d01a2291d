"""What every loader shares: prefixes, normalisation, the dimension check, and the token vectors
kept from the forward pass that embedded a text (for late interaction to reuse)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Sequence

import numpy as np

from rag_assets.lib.embed.spec import ModelSpec, ModelUnavailableError, files_revision
from rag_assets.lib.embed.vectors import l2_normalize

EMBED_BLOCK = 256  # texts per forward pass of a long embed() call


class _TokenMemory:
    """Token vectors kept from the forward pass that embedded a text, for late interaction to reuse
    instead of running the model again; bounded by a number of token vectors, oldest dropped first."""

    def __init__(self, capacity: int = 400_000) -> None:
        self.capacity, self.size, self.kept = capacity, 0, OrderedDict()

    def keep(self, text: str, tokens: np.ndarray) -> None:
        if text in self.kept:
            return
        self.kept[text] = tokens
        self.size += len(tokens)
        while self.size > self.capacity and self.kept:
            _, dropped = self.kept.popitem(last=False)
            self.size -= len(dropped)

    def get(self, text: str) -> np.ndarray | None:
        return self.kept.get(text)


class EmbedderBase:
    """What every loader shares: prefixes, normalisation, the dimension check, kept token vectors.

    A loader also knows its files without loading the model: ``weight_files(spec)`` and the
    revision they make, ``installed_revision(spec)``; ``load(spec, onnx_dir)`` builds one.
    """

    spec: ModelSpec
    revision: str
    runtime = "native"
    _memory: _TokenMemory | None = None

    @classmethod
    def weight_files(cls, spec: ModelSpec) -> list[Path]:
        """The files whose bytes define what the model computes, in a fixed order."""
        raise NotImplementedError

    @classmethod
    def installed_revision(cls, spec: ModelSpec) -> str:
        """The revision of the weights installed now: a hash of ``weight_files(spec)``."""
        return files_revision(cls.weight_files(spec))

    @classmethod
    def load(cls, spec: ModelSpec, onnx_dir: Path | None = None) -> EmbedderBase:
        """Load the model; ``onnx_dir`` matters only to a loader that can run an exported graph."""
        return cls(spec)

    @property
    def token_memory(self) -> _TokenMemory:
        if self._memory is None:
            self._memory = _TokenMemory()
        return self._memory

    def _token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        raise NotImplementedError

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per text, its token vectors: kept from the pass that embedded it, else computed now."""
        found = {text: self.token_memory.get(text) for text in texts}
        missing = [text for text, tokens in found.items() if tokens is None]
        if missing:
            found.update(zip(missing, self._token_vectors(missing)))
        return [found[text] for text in texts]

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    @property
    def key(self) -> str:
        return self.spec.key

    @property
    def dimension(self) -> int:
        return self.spec.dimension

    @property
    def window(self) -> int | None:
        return self.spec.window

    @property
    def normalized(self) -> bool:
        return self.spec.normalized

    def _finish(self, vectors: np.ndarray, count: int) -> np.ndarray:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(count, -1)
        if vectors.shape[1] != self.spec.dimension:
            raise ModelUnavailableError(
                f"embedding model {self.spec.key!r} gives {vectors.shape[1]}-dimensional vectors, but its "
                f"registry entry declares {self.spec.dimension}; fix the entry's dimension"
            )
        return l2_normalize(vectors) if self.spec.normalized else vectors

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.spec.dimension), dtype=np.float32)
        # in blocks, so that memory (the token vectors of a block) does not grow with the call
        blocks = [texts[i: i + EMBED_BLOCK] for i in range(0, len(texts), EMBED_BLOCK)]
        return np.concatenate([self._finish(self._encode(block), len(block)) for block in blocks])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self.spec.document_prefix + text for text in texts])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self.spec.query_prefix + text for text in texts])

    def check_dimension(self) -> None:
        self.embed(["dimension probe"])
