from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def tiny_corpus() -> Path:
    return FIXTURES / "tiny_corpus"


@pytest.fixture
def tiny_needles() -> Path:
    return FIXTURES / "tiny_needles.jsonl"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """No test writes into the project's storage folder or reads the developer's Dagster home."""
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "rag_home"))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
