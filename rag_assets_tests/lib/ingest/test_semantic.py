"""The semantic splitters' model: which classes embed, the model's stamp, and adapters that give each library
the registered model's vectors unchanged (a fake embed: this logic does not depend on the model)."""

from __future__ import annotations

import numpy as np
import pytest

from rag_assets.lib.ingest.semantic import (
    DEFAULT_MODEL,
    chonkie_embeddings,
    llamaindex_embedding,
    model_argument,
    semantic_classes,
)


def test_only_the_semantic_classes_take_a_model():
    assert model_argument("llamaindex", "SemanticSplitterNodeParser") == "embed_model"
    assert model_argument("chonkie", "SemanticChunker") == "embedding_model"
    assert model_argument("chonkie", "RecursiveChunker") is None
    assert model_argument("langchain", "SemanticChunker") is None  # the kind counts, not only the name
    assert semantic_classes() == "llamaindex SemanticSplitterNodeParser, chonkie SemanticChunker"


def test_the_default_model_is_the_projects_default_and_the_registry_gives_stamps_without_loading(monkeypatch):
    from rag_assets.lib.embed import models
    from rag_assets.lib.embed.models import RegistryModels

    assert DEFAULT_MODEL == models.DEFAULT_MODEL
    monkeypatch.setattr(models, "current_revision", lambda spec: f"rev-{spec.key}")
    monkeypatch.setattr(models, "load_model", lambda key, registered: pytest.fail("loaded"))
    registered = RegistryModels(models.BUILT_IN)
    assert registered.stamp("all-MiniLM-L6-v2") == "model all-MiniLM-L6-v2 rev-all-MiniLM-L6-v2"
    assert registered.dimension("all-MiniLM-L6-v2") == 384
    registered.embed("all-MiniLM-L6-v2")  # nothing loaded until it embeds
    with pytest.raises(KeyError, match=r"model 'x' is not registered \(registered: all-MiniLM-L6-v2, "):
        registered.stamp("x")


def test_the_semantic_adapters_give_the_models_vectors_to_each_library():
    """The adapters pass the registered model's vectors through unchanged, one text or a batch (a fake embed: the
    adapters' logic does not depend on the model)."""
    seen: list[list[str]] = []

    def embed(texts):
        seen.append(list(texts))
        return np.array([[len(text), text.count("a"), 1.0] for text in texts], dtype=np.float32)

    llama = llamaindex_embedding(embed, "fake")
    assert llama.get_text_embedding("banana") == [6.0, 3.0, 1.0]
    assert llama.get_text_embedding_batch(["a", "bb"]) == [[1.0, 1.0, 1.0], [2.0, 0.0, 1.0]]
    assert llama.get_query_embedding("aa") == [2.0, 2.0, 1.0]
    chonkie = chonkie_embeddings(embed, 3, "character")
    assert chonkie.dimension == 3 and chonkie.get_tokenizer() == "character"
    assert chonkie.embed("abc").tolist() == [3.0, 1.0, 1.0]
    assert [vector.tolist() for vector in chonkie.embed_batch(["a", "bcd"])] == [[1.0, 1.0, 1.0], [3.0, 0.0, 1.0]]
    assert chonkie.embed_batch([]) == [] and ["a", "bcd"] in seen
