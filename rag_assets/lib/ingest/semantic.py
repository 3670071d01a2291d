"""Semantic splitters with the evaluation's own model: LlamaIndex's ``SemanticSplitterNodeParser`` and Chonkie's
``SemanticChunker`` cut where the meaning of neighbouring sentences changes, which they judge with an embedding
model. Here that model is one of the registry's, loaded from its installed package as the evaluation loads it
(nothing is downloaded), named by the strategy's ``model`` key (default: the default model). Its weight revision
is part of the strategy's partition version, so new weights mark exactly these strategies' chunks stale.

Ingest comes before embed: the registry is passed in by the caller as ``SemanticModels`` (``embed.models``'s
``RegistryModels``). Each library gets the model through its own embedding interface: an adapter
(``llamaindex_embedding``, ``chonkie_embeddings``) around the model's ``embed``.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"  # embed.models.DEFAULT_MODEL (a test holds them equal)

# (kind, splitter class): the keyword argument the class takes its embedding model by
SEMANTIC = {
    ("llamaindex", "SemanticSplitterNodeParser"): "embed_model",
    ("chonkie", "SemanticChunker"): "embedding_model",
}


def model_argument(kind: str, splitter: str) -> str | None:
    """The keyword argument a semantic splitter class takes its model by; None for a splitter that embeds nothing."""
    return SEMANTIC.get((kind, splitter))


def semantic_classes() -> str:
    return ", ".join(f"{kind} {splitter}" for kind, splitter in SEMANTIC)


class SemanticModels(Protocol):
    """The registered models, as a semantic splitter needs them."""

    def stamp(self, key: str) -> str:
        """The model's key and installed weight revision; KeyError naming the registered models when unknown."""

    def dimension(self, key: str) -> int:
        """The model's vector dimension (without loading it)."""

    def embed(self, key: str) -> Callable[[Sequence[str]], np.ndarray]:
        """The model's document embedding, loaded at its first call."""


def llamaindex_embedding(embed: Callable[[Sequence[str]], np.ndarray], name: str):
    """A LlamaIndex ``BaseEmbedding`` whose vectors are ``embed``'s (documents and queries alike: the splitter
    compares sentences with sentences)."""
    from llama_index.core.base.embeddings.base import BaseEmbedding

    class RegistryEmbedding(BaseEmbedding):
        def _get_text_embedding(self, text: str) -> list[float]:
            return embed([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return embed(texts).tolist()

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_text_embedding(query)

    return RegistryEmbedding(model_name=name, embed_batch_size=64)


def chonkie_embeddings(embed: Callable[[Sequence[str]], np.ndarray], dimension: int, tokenizer: Any):
    """A Chonkie ``BaseEmbeddings`` whose vectors are ``embed``'s; ``tokenizer`` is what Chonkie counts a chunk's
    size with (the strategy's unit)."""
    from chonkie.embeddings import BaseEmbeddings

    class RegistryEmbeddings(BaseEmbeddings):
        def embed(self, text: str) -> np.ndarray:
            return np.asarray(embed([text])[0], dtype=np.float32)

        def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
            return list(np.asarray(embed(list(texts)), dtype=np.float32)) if texts else []

        @property
        def dimension(self) -> int:
            return dimension

        def get_tokenizer(self) -> Any:
            return tokenizer

    return RegistryEmbeddings()
