"""`rag-assets gate`: a pull request's verdict, run twice on one corpus against a baseline storage folder: a
harmless edit passes (exit 0), an edit that deletes the answers of five needles fails (exit 1) naming them, and a
baseline that cannot be compared with is one line, exit 2, with nothing written to it."""

import json
import shutil
from pathlib import Path

import pytest

from rag_assets_tests.conftest import SMALL_CORPUS, SMALL_NEEDLES, SMALL_OUT_OF_DOMAIN
from rag_assets_tests.servers import FIXTURES, cli

pytestmark = pytest.mark.integration

MODELS = ["--models", "wordllama", "--strategies", "boundaries"]


def env_of(home: Path, corpus: Path, needles: Path = SMALL_NEEDLES) -> dict:
    import os

    return {**os.environ, "RAG_ASSETS_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"),
            "RAG_ASSETS_CORPUS": str(corpus), "RAG_ASSETS_EVAL_SET": str(needles),
            "RAG_ASSETS_OUT_OF_DOMAIN": str(SMALL_OUT_OF_DOMAIN), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def tree_state(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    corpus = root / "corpus"
    shutil.copytree(SMALL_CORPUS, corpus)
    home = root / "main-storage"
    done = cli(env_of(home, corpus), "evaluate", *MODELS)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root, corpus, home


def answerable(corpus: Path) -> list[dict]:
    """Needles whose sentence stands verbatim in its page's source, so an edit can delete it."""
    needles = [json.loads(line) for line in SMALL_NEEDLES.read_text().splitlines() if line.strip()]
    return [n for n in needles if n["needle"] in (corpus / n["doc_id"]).read_text()]


def test_a_harmless_edit_passes_and_deleting_five_answers_fails_naming_them(baseline):
    root, corpus, main = baseline
    before = tree_state(main)
    pull_request = root / "pr-storage"
    env = env_of(pull_request, corpus)
    page = sorted(corpus.glob("*.html"))[0]
    page.write_text(page.read_text().replace("</body>", "<p>This page was reviewed in December.</p></body>", 1))
    passed = cli(env, "gate", "--baseline", str(main))
    assert passed.returncode == 0, passed.stdout[-4000:] + passed.stderr[-3000:]
    summary = (pull_request / "gate" / "summary.md").read_text()
    assert summary.startswith("## rag-assets gate: pass") and "**The pick is unchanged**" in summary
    junit = (pull_request / "gate" / "junit.xml").read_text()
    assert 'failures="0"' in junit and '<testcase classname="rag-assets gate" name="the pick">' in junit

    deleted = answerable(corpus)[:5]
    assert len(deleted) == 5
    for needle in deleted:
        source = corpus / needle["doc_id"]
        source.write_text(source.read_text().replace(needle["needle"], "", 1))
    failed = cli(env, "gate", "--baseline", str(main), "--summary", str(root / "comment.md"))
    assert failed.returncode == 1, failed.stdout[-4000:] + failed.stderr[-3000:]
    comment = (root / "comment.md").read_text()
    assert comment.startswith("## rag-assets gate: FAIL")
    ids = sorted(n["id"] for n in deleted)
    assert f"**The docs lost the answer of 5 needles** (the sentence is gone): {', '.join(ids)}." in comment, comment
    assert "### Needles this corpus lost (left out)" in comment
    junit = (pull_request / "gate" / "junit.xml").read_text()
    assert '<testcase classname="rag-assets gate" name="the answers"><failure' in junit
    assert all(needle_id in junit for needle_id in ids)
    assert tree_state(main) == before  # nothing written to the baseline


def test_a_baseline_that_cannot_be_compared_with_is_one_line_exit_2_and_untouched(baseline, tmp_path):
    root, corpus, main = baseline
    before = tree_state(main)
    env = env_of(tmp_path / "pr", corpus)

    def refused(*args, env=env) -> str:
        done = cli(env, "gate", *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stdout[-2000:] + done.stderr
        assert not (tmp_path / "pr" / "metrics.duckdb").exists()  # nothing was evaluated
        return done.stderr

    versioned = tmp_path / "versioned"
    versioned.mkdir()
    shutil.copy(SMALL_NEEDLES, versioned / "needles.jsonl")
    (versioned / "CHANGELOG.md").write_text("## 2.0\n\nAnother set.\n")
    said = refused("--baseline", str(main), env=env_of(tmp_path / "pr", corpus, versioned / "needles.jsonl"))
    assert "evaluated version unversioned of the evaluation set" in said and "is version 2.0" in said
    said = refused("--baseline", str(main), env=env_of(tmp_path / "pr", FIXTURES / "tiny_corpus"))
    assert "evaluated another corpus: 0% of the documents are in both" in said
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "metrics.duckdb").write_bytes(b"not a database" * 100)
    assert "metrics.duckdb is damaged" in refused("--baseline", str(damaged))
    assert "no metrics.duckdb" in refused("--baseline", str(tmp_path / "nowhere"))
    malformed = tmp_path / "malformed.jsonl"
    malformed.write_text(SMALL_NEEDLES.read_text().replace('"questions"', '"previous": 3, "questions"', 1))
    said = refused("--baseline", str(main), env=env_of(tmp_path / "pr", corpus, malformed))
    assert f"{malformed}:1: 'previous' must be a list of earlier versions" in said
    assert "must not be written into the baseline" in refused("--baseline", str(main), "--summary",
                                                              str(main / "summary.md"))
    assert tree_state(main) == before
