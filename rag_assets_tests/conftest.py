import json
from dataclasses import asdict
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def tiny_corpus() -> Path:
    return FIXTURES / "tiny_corpus"


@pytest.fixture
def tiny_needles() -> Path:
    return FIXTURES / "tiny_needles.jsonl"


# 30 pages, 100 to 109 chunks under each strategy (30 under `document`), 14 needles in two phrasings and
# 4 out-of-domain questions: big enough that judging, ranks and intervals can be wrong
SMALL_CORPUS = FIXTURES / "small_corpus"
SMALL_NEEDLES = FIXTURES / "small_needles.jsonl"
SMALL_OUT_OF_DOMAIN = FIXTURES / "small_out_of_domain.jsonl"


@pytest.fixture(autouse=True)
def _real_models_only_in_integration_tests(request, monkeypatch):
    """A test that loads a real embedding model is an integration test: one without the mark that tries
    fails here, naming itself, so `make test-fast` stays fast and its marks stay true."""
    if request.node.get_closest_marker("integration"):
        return
    from rag_assets.lib.embed.models import LOADERS

    def refuse(cls, spec, onnx_dir=None):
        raise AssertionError(f"{request.node.nodeid} loads the real model {spec.key}: mark it "
                             "pytest.mark.integration")

    for loader in LOADERS.values():
        monkeypatch.setattr(loader, "load", classmethod(refuse))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """No test writes into the project's storage folder or reads the developer's Dagster home."""
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "rag_home"))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


@pytest.fixture
def register_models(tmp_path, monkeypatch):
    """``register(*specs)``: add model registry entries for one test as a user does, in a registry file
    named by RAG_ASSETS_MODELS_FILE (the built-in models stay registered); returns the file's path."""
    registry = tmp_path / "registered-models.json"

    def register(*specs) -> str:
        entries = json.loads(registry.read_text()) if registry.exists() else []
        registry.write_text(json.dumps(entries + [asdict(spec) for spec in specs]))
        monkeypatch.setenv("RAG_ASSETS_MODELS_FILE", str(registry))
        return str(registry)

    return register
