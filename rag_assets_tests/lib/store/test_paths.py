from rag_assets.settings import PROJECT_ROOT, current


def test_home_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "elsewhere"))
    assert current().home == tmp_path / "elsewhere"


def test_default_home_is_the_git_ignored_storage_folder(monkeypatch):
    monkeypatch.delenv("RAG_ASSETS_HOME")
    assert current().home == PROJECT_ROOT / "storage"
    ignored = (PROJECT_ROOT / ".gitignore").read_text().split()
    assert "storage/" in ignored
