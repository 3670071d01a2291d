"""The WordLlama loader: static token vectors, mean-pooled, from the package's own folder."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import numpy as np

from rag_assets.lib.embed.embedder import EmbedderBase
from rag_assets.lib.embed.spec import (
    ModelSpec,
    ModelUnavailableError,
    distribution_file,
)


class WordLlamaEmbedder(EmbedderBase):
    """WordLlama static token vectors, mean-pooled; loaded from its package folder, never downloaded."""

    special_tokens = 0

    @classmethod
    def weight_files(cls, spec: ModelSpec) -> list[Path]:
        folder = Path(spec.folder) if spec.folder else distribution_file(spec, spec.package, "wordllama/__init__.py").parent
        files = sorted(folder.glob("weights/*.safetensors")) + sorted(folder.glob("tokenizers/*.json"))
        if not files:
            raise ModelUnavailableError(
                f"embedding model {spec.key!r}: no weights under {folder}; "
                f"reinstall it with pip install --force-reinstall {spec.package}")
        return files

    def __init__(self, spec: ModelSpec) -> None:
        root_level = logging.getLogger().level
        import wordllama  # its import sets the root logger to INFO: put it back
        from wordllama import WordLlama

        logging.getLogger().setLevel(root_level)
        self.spec = spec
        self.revision = self.installed_revision(spec)
        folder = Path(spec.folder) if spec.folder else Path(wordllama.__file__).parent
        self.model = WordLlama.load(cache_dir=folder, disable_download=True)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.model.embed(texts, norm=False)

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, without the padding its tokenizer adds to a batch."""
        encoded = self.model.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [[i for i, m in zip(e.ids, e.attention_mask) if m] for e in encoded]

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self._token_ids(texts)]

    def _token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        """Its static token vectors: rows of the embedding table, one per token."""
        table = self.model.embedding
        return [np.asarray(table[np.clip(ids, 0, len(table) - 1)], dtype=np.float32).reshape(len(ids), -1)
                for ids in self._token_ids(texts)]
