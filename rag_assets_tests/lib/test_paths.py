from rag_assets.lib import paths


def test_home_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "elsewhere"))
    assert paths.storage_home() == tmp_path / "elsewhere"


def test_default_home_is_the_git_ignored_storage_folder(monkeypatch):
    monkeypatch.delenv("RAG_ASSETS_HOME")
    assert paths.storage_home() == paths.PROJECT_ROOT / "storage"
    ignored = (paths.PROJECT_ROOT / ".gitignore").read_text().split()
    assert "storage/" in ignored
