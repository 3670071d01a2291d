"""Docs change every day: a writer rewrites a needle's sentence, and the next `rag-assets evaluate` goes on with
the needles that hold, names the lost one with its successor (the verdict, metrics.duckdb, the page) and compares
the two runs on the needles both asked."""

import base64
import gzip
import json
import re
import shutil

import duckdb
import pytest

from rag_assets_tests.servers import FIXTURES, WORDLLAMA, cli, tiny_home_env
from rag_assets_tests.test_page_browser import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.integration

EDITED = "Slide out the crumb tray at the bottom and empty it over a bin every day, since old crumbs can catch fire."


@pytest.mark.browser
def test_an_edited_needle_sentence_no_longer_stops_the_evaluation(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "tiny_corpus", corpus)
    home = tmp_path / "home"
    env = tiny_home_env(home) | {"RAG_ASSETS_CORPUS": str(corpus), "RAG_ASSETS_MAX_LOST_NEEDLES": "0.5"}
    first = cli(env, "evaluate", *WORDLLAMA)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "left out of this evaluation" not in first.stdout

    page = corpus / "toasters.html"
    page.write_text(page.read_text().replace("once a week", "every day"))  # the writer's edit of t1's sentence
    second = cli(env, "evaluate", *WORDLLAMA)
    assert second.returncode == 0, second.stderr[-3000:]
    out = second.stdout
    assert "1 needle left out of this evaluation" in out, out[-4000:]
    assert re.search(r"t1: edited \(0\.9\d alike\); successor offered: \"" + re.escape(EDITED) + '"', out), out[-4000:]
    assert "warning: needle t1: edited" in second.stdout + second.stderr
    # the two runs compared on the needles both asked, t1 named as left out
    assert "1 needle not compared, not present and unchanged in both runs (edited: t1)" in out, out[-4000:]

    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        newest = connection.sql("SELECT run_id FROM evaluation_runs ORDER BY created_at DESC LIMIT 1").fetchall()[0][0]
        changes = connection.execute("SELECT needle_id, status, successor FROM needle_changes WHERE run_id = ?",
                                     [newest]).fetchall()
        assert changes == [("t1", "edited", EDITED)]
        asked = {row[0] for row in connection.execute(
            "SELECT DISTINCT needle_id FROM retrieval_results WHERE run_id = ? AND needle_id IS NOT NULL",
            [newest]).fetchall()}
        assert asked == {"k1", "f1"}
    text = (home / "report" / "index.html").read_text()
    data = json.loads(gzip.decompress(base64.b64decode(
        re.search(r'<script id="page-data" type="application/octet-stream">([^<]+)</script>', text).group(1))))
    assert [(c["needle_id"], c["status"], c["successor"]) for c in data["needle_changes"]] == [("t1", "edited", EDITED)]
    # ... and the page shows it under the decision, in a real browser
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((home / "report" / "index.html").as_uri())
        page.wait_for_function("() => document.body.getAttribute('data-ready') === 'true'", timeout=60_000)
        shown = page.locator("#decision-body [data-testid=needle-changes]")
        assert not errors and shown.count() == 1, errors
        text = shown.inner_text()
        assert text.startswith("1 needle left out of this evaluation: the corpus no longer holds it as written")
        assert shown.locator("li[data-needle=t1]").inner_text().startswith("t1: edited (0.9")
        assert EDITED in text
        # the two-runs view compares the runs on the needles both asked, and says which it left out and why
        left_out = page.locator("[data-testid=run-left-out]")
        assert left_out.inner_text() == "1 needle not compared, not present and unchanged in both runs: edited: t1"
        browser.close()


def test_needles_repair_writes_the_accepted_successors_into_a_file_needles_check_passes(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "tiny_corpus", corpus)
    page = corpus / "toasters.html"
    page.write_text(page.read_text().replace("once a week", "every day"))
    needles = tmp_path / "needles.jsonl"
    shutil.copy(FIXTURES / "tiny_needles.jsonl", needles)
    before = needles.read_bytes()
    choices = tmp_path / "choices.jsonl"
    choices.write_text('{"id": "t1", "choice": "accept"}\n')
    env = tiny_home_env(tmp_path / "home")
    args = ["needles", "repair", str(needles), "--corpus", str(corpus)]
    done = cli(env, *args, "--choices", str(choices))
    assert done.returncode == 0, done.stderr
    assert "t1: its successor accepted" in done.stdout and "1 changed" in done.stdout
    repaired = tmp_path / "needles.repaired.jsonl"
    [t1] = [json.loads(line) for line in repaired.read_text().splitlines() if '"t1"' in line]
    assert t1["needle"] == EDITED and t1["previous"][0]["decision"] == "accept"
    assert needles.read_bytes() == before  # the file given is never changed
    checked = cli(env, "needles", "check", str(repaired), "--corpus", str(corpus))
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # bad input: one line each, exit 2, nothing written
    repaired.unlink()
    choices.write_text('{"id": "t1", "choice": "maybe"}\n')
    bad = cli(env, *args, "--choices", str(choices))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and f"{choices}:1: 'choice' must be one of" in bad.stderr
    assert not repaired.exists()
    no_terminal = cli(env, *args)  # no choices and no terminal to ask in
    assert no_terminal.returncode == 2 and "give the decisions with --choices FILE" in no_terminal.stderr
    malformed = tmp_path / "malformed.jsonl"
    malformed.write_text(needles.read_text().replace('"kind"', '"previous": "old", "kind"', 1)
                         if '"kind"' in needles.read_text() else
                         needles.read_text().replace('"questions"', '"previous": "old", "questions"', 1))
    history = cli(env, "needles", "repair", str(malformed), "--corpus", str(corpus), "--choices", str(choices))
    assert history.returncode == 2 and f"{malformed}:1: 'previous' must be a list of earlier versions" in history.stderr
    same = cli(env, *args, "--out", str(needles), "--choices", str(choices))
    assert same.returncode == 2 and "is the needle file itself" in same.stderr
