"""A documentation tree is untrusted input: through `rag-assets evaluate` and `needles suggest`, an mkdocs.yml
that names code (``module:attr`` extensions) never runs it, and neither the snippets extension under its alias
(a ``base_path`` outside) nor a MyST ``{include}`` leaving the tree reads outside the corpus folder; what was
not loaded is said, with why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets_tests.servers import cli, tiny_home_env

pytestmark = [pytest.mark.integration]

SECRET = "the secret line outside the corpus that must never be indexed"
NEEDLE = "Descale the kettle once a month with a cup of white vinegar and a cup of water."


def hostile_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(the corpus: an MkDocs tree and a Sphinx tree side by side, the needle file, the marker file the
    hostile configuration would create)."""
    marker = tmp_path / "PWNED"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"{SECRET}.\n")
    corpus = tmp_path / "corpus"
    (corpus / "site" / "docs").mkdir(parents=True)
    (corpus / "site" / "mkdocs.yml").write_text(
        "site_name: Kettles\nmarkdown_extensions:\n"
        f"  - os:system:\n      command: \"touch {marker}\"\n"
        f"  - pymdownx.snippets:SnippetExtension:\n      base_path: [\"{outside}\"]\n"
        "  - admonition\n")
    (corpus / "site" / "docs" / "kettles.md").write_text(
        f"# Kettles\n\n{NEEDLE}\n\n--8<-- \"secret.md\"\n\n--8<--\nsecret.md\n--8<--\n\n"
        "!!! note\n    Pour the water out before it cools.\n")
    (corpus / "book").mkdir()
    (corpus / "book" / "conf.py").write_text(f"open({str(marker)!r}, 'w').write('conf.py ran')\n")
    (corpus / "book" / "index.md").write_text(
        "# Toasters\n\nEmpty the crumb tray of the toaster every week.\n\n"
        "```{include} ../../outside/secret.md\n```\n")
    needles = tmp_path / "needles.jsonl"
    needles.write_text(json.dumps({"id": "k1", "doc_id": "site/docs/kettles.md", "needle": NEEDLE,
                                   "questions": {"doc": "How often should a kettle be descaled?",
                                                 "ticket": "white stuff in my kettle, how often to clean?"}}) + "\n")
    return corpus, needles, marker


def test_a_hostile_tree_never_runs_code_or_reads_outside_through_evaluate_and_suggest(tmp_path):
    corpus, needles, marker = hostile_tree(tmp_path)
    home = tmp_path / "home"
    env = tiny_home_env(home) | {"RAG_ASSETS_CORPUS": str(corpus), "RAG_ASSETS_EVAL_SET": str(needles)}
    env.pop("RAG_ASSETS_OUT_OF_DOMAIN")
    result = cli(env, "evaluate", "--models", "wordllama", "--strategies", "boundaries")
    assert not marker.exists(), "the tree's configuration ran code"
    assert result.returncode == 0, result.stderr[-3000:]
    said = result.stdout + result.stderr
    assert "Markdown extension os:system not loaded: names code (module:attribute)" in said, said[-3000:]
    assert "pymdownx.snippets:SnippetExtension not loaded" in said
    for parquet in (home / "parquet").rglob("*.parquet"):
        assert SECRET.encode() not in parquet.read_bytes(), parquet

    suggested = tmp_path / "suggested.jsonl"
    result = cli(env, "needles", "suggest", str(suggested), "--no-meaning-check")
    assert result.returncode == 0, result.stderr[-3000:]
    assert not marker.exists() and SECRET not in suggested.read_text()
