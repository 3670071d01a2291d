import numpy as np
import pytest

from rag_assets.lib import embedding
from rag_assets.lib.embedding import MODELS, ModelSpec, ModelUnavailableError, load_model, model_revision


def test_real_model_loads_offline_with_declared_dimension_and_unit_norm(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_model("all-MiniLM-L6-v2")
    vectors = model.embed(["How do I descale a kettle?", "Toasters brown bread."])
    assert vectors.dtype == np.float32 and vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # semantically close texts are nearer than unrelated ones
    close = model.embed(["remove limescale from the kettle"])[0]
    assert close @ vectors[0] > close @ vectors[1]
    assert len(model.revision) == 16 and model.revision == model_revision(model.folder)


def test_missing_package_names_the_package(monkeypatch):
    monkeypatch.setitem(MODELS, "ghost", ModelSpec("ghost", "gt-ghost-model", "gt_ghost_model", 8, 128))
    with pytest.raises(ModelUnavailableError, match="pip install gt-ghost-model"):
        load_model("ghost")


def test_unregistered_model_lists_the_registry():
    with pytest.raises(ModelUnavailableError, match="all-MiniLM-L6-v2"):
        load_model("nope")


def test_revision_changes_with_one_weight_byte(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 64)
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "README.md").write_text("docs do not count")
    before = model_revision(tmp_path)
    (tmp_path / "README.md").write_text("changed docs")
    assert model_revision(tmp_path) == before
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 63 + b"\x01")
    assert model_revision(tmp_path) != before


def test_l2_normalize_handles_zero_rows():
    out = embedding.l2_normalize(np.array([[3, 4], [0, 0]], dtype=np.float32))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0, 0]])
