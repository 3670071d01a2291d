"""The evaluation page (``report/index.html``) as a person sees it, in Debian's Chromium driven by Playwright for
Python, opened from the storage folder with every request outside the file blocked: the decision, a sort, two
configurations side by side with the needle highlighted, why a query missed, and a needle that flipped between
two runs.

The home is a real evaluation of the small corpus (two models, two strategies) at a 256-token budget, where
real misses exist. A second run is then made from the first with one needle of the pick lost (its holding
chunk taken out of the pick's lists), so that the two runs differ by a known flip; the page is written again
as the metrics asset writes it. Screenshots go to ``test-artefacts/page/`` (the docs' come from there).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from rag_assets.lib.evaluate.decision import stored_decision
from rag_assets.lib.evaluate.page import write_page
from rag_assets.lib.evaluate.page_data import key_of
from rag_assets.lib.store.paths import duckdb_path
from rag_assets_tests.conftest import SMALL_CORPUS, SMALL_NEEDLES, SMALL_OUT_OF_DOMAIN

pytestmark = [pytest.mark.integration, pytest.mark.browser]

PROJECT = Path(__file__).resolve().parents[1]
ARTEFACTS = PROJECT / "test-artefacts" / "page"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
BUDGET = 256


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("page") / "home"
    env = {**os.environ, "RAG_ASSETS_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"),
           "RAG_ASSETS_CORPUS": str(SMALL_CORPUS), "RAG_ASSETS_EVAL_SET": str(SMALL_NEEDLES),
           "RAG_ASSETS_OUT_OF_DOMAIN": str(SMALL_OUT_OF_DOMAIN), "RAG_ASSETS_DECISION_BUDGET": str(BUDGET),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", "wordllama",
                           "paraphrase-MiniLM-L3-v2", "--strategies", "boundaries", "boundaries_header"],
                          env=env, capture_output=True, text=True, cwd=PROJECT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return home


def flip_one_needle_of_the_pick(home: Path) -> tuple[str, str]:
    """A second run, the first's rows with one needle the pick had inside the budget lost (its holding chunks
    taken out of the pick's lists under both phrasings) and a setting changed; returns (needle, the previous
    run's id)."""
    with duckdb.connect(str(duckdb_path(home))) as connection:
        decision = stored_decision(connection)
        pick = (decision["model"], decision["strategy"], decision["retriever"])
        [(previous,)] = connection.sql("SELECT run_id FROM evaluation_runs").fetchall()
        [(needle,)] = connection.execute(
            f"SELECT needle_id FROM query_measures WHERE model = ? AND strategy = ? AND retriever = ? "
            f"GROUP BY needle_id HAVING min(hit_in_{BUDGET}_tokens) = 1 ORDER BY needle_id LIMIT 1", list(pick)).fetchall()
        connection.execute("""
            INSERT INTO evaluation_runs BY NAME SELECT * REPLACE ('flipped' AS run_id,
                created_at + INTERVAL 1 MINUTE AS created_at,
                json_merge_patch(settings, '{"top_k": 5, "decision": {"budget": 512}}') AS settings)
            FROM evaluation_runs""")
        lost = "model = ? AND strategy = ? AND retriever = ? AND needle_id = ?"
        connection.execute(f"""
            INSERT INTO retrieval_results BY NAME SELECT * REPLACE ('flipped' AS run_id,
                CASE WHEN {lost} THEN NULL ELSE hit_rank END AS hit_rank,
                CASE WHEN {lost} THEN []::BIGINT[] ELSE relevant_ranks END AS relevant_ranks,
                CASE WHEN {lost} THEN list_filter(chunk_ids, lambda c, i: NOT list_contains(relevant_ranks, i))
                     ELSE chunk_ids END AS chunk_ids,
                CASE WHEN {lost} THEN list_filter(distances, lambda d, i: NOT list_contains(relevant_ranks, i))
                     ELSE distances END AS distances,
                CASE WHEN {lost} THEN list_filter(scores, lambda s, i: NOT list_contains(relevant_ranks, i))
                     ELSE scores END AS scores)
            FROM retrieval_results""", [*pick, needle] * 5)
    return needle, previous


def shot(page, locator, name: str, height: int = 1100) -> None:
    """A screenshot of what ``locator`` shows, at most ``height`` pixels of it."""
    box = locator.bounding_box()  # in the viewport; the page's own coordinates add its scroll
    scrolled = page.evaluate("() => [window.scrollX, window.scrollY]")
    page.screenshot(path=str(ARTEFACTS / name), full_page=True,
                    clip={"x": box["x"] + scrolled[0], "y": box["y"] + scrolled[1], "width": box["width"],
                          "height": min(box["height"], height)})


def settled(page) -> None:
    """Wait for a change the page draws after showing that it is working (its busy indicator)."""
    page.wait_for_function("() => !document.body.hasAttribute('aria-busy')", timeout=60_000)


def test_a_person_reads_the_decision_sorts_compares_sees_why_and_sees_a_flip(evaluated):
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: apt-get install chromium (.ci/run does it)"
    from playwright.sync_api import sync_playwright

    page_file = evaluated / "report" / "index.html"
    assert page_file.exists(), "the metrics asset wrote no evaluation page"
    with duckdb.connect(str(duckdb_path(evaluated)), read_only=True) as connection:
        decision = stored_decision(connection)
    pick = key_of(decision["model"], decision["strategy"], decision["retriever"])
    winner = f"{decision['model']}: {decision['strategy']} x {decision['retriever']}"
    needle, previous = flip_one_needle_of_the_pick(evaluated)
    write_page(duckdb_path(evaluated), evaluated)  # as the metrics asset writes it after a run
    size = page_file.stat().st_size
    assert size < 3 * 2**20, f"the page is {size} bytes"
    ARTEFACTS.mkdir(parents=True, exist_ok=True)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        outside, errors = [], []
        page.route("**/*", lambda route: route.continue_() if route.request.url == page_file.as_uri()
                   else (outside.append(route.request.url), route.abort()))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(page_file.as_uri())
        page.wait_for_selector("body[data-ready]", timeout=60_000)
        assert page.get_attribute("body", "data-ready") == "true", page.inner_text("#decision")
        assert not errors and not outside, (errors, outside)
        page.screenshot(path=str(ARTEFACTS / "decision.png"))

        # the decision's winner is DuckDB's
        assert page.inner_text("[data-testid=winner-name]") == winner
        assert f"at {BUDGET} context tokens" in page.inner_text("[data-testid=winner]")
        assert "Runner-up" in page.inner_text("[data-testid=runner-up]")

        # sorting by a column reorders the rows: by default the decision's measure, best first; then by model
        rows = page.locator("[data-testid=comparison-table] tbody tr")
        before = [rows.nth(i).get_attribute("data-key") for i in range(rows.count())]
        assert before[0] == pick or page.locator(f"[data-testid=comparison-table] tr[data-key='{pick}']").count() == 1
        page.locator("[data-testid=comparison-table] th[data-column=model]").click()
        after = [rows.nth(i).get_attribute("data-key") for i in range(rows.count())]
        assert sorted(after) == sorted(before) and after != before
        models = [key.split("|")[0] for key in after]
        assert models == sorted(models)
        page.select_option("[data-testid=filter-strategy]", "boundaries")
        assert all(rows.nth(i).get_attribute("data-key").split("|")[1] == "boundaries" for i in range(rows.count()))
        page.locator("#comparison").screenshot(path=str(ARTEFACTS / "comparison.png"))

        # two configurations side by side: a configuration that kept the needle against the pick that lost it
        keeper = page.evaluate(f"""() => D.configurations.map(c => c.key).find(k => k !== '{pick}' &&
            D.needle_values[k] && D.needle_values[k][D.needles.findIndex(n => n.id === '{needle}')] === '1')""")
        assert keeper, "no other configuration holds the flipped needle inside the budget"
        page.select_option("[data-testid=side-a]", keeper)
        settled(page)
        page.select_option("[data-testid=side-b]", pick)
        settled(page)
        won = page.locator(f"[data-testid=side-needles] [data-testid=needle][data-needle='{needle}']")
        assert won.count() == 1, page.inner_text("[data-testid=side-summary]")
        assert "(wins)" in won.locator("[data-testid=side-a] h4").inner_text()
        highlighted = won.locator("[data-testid=side-a] [data-testid=needle-chunk] mark")
        assert highlighted.count() >= 1
        text = highlighted.first.inner_text()
        needle_text = page.evaluate(f"() => D.needles.find(n => n.id === '{needle}').text")
        assert " ".join(text.split()) == " ".join(needle_text.split())
        assert won.locator("[data-testid=side-b] mark").count() == 0  # the pick's lists no longer hold it
        shot(page, won, "side-by-side.png")

        # why a query missed: the pick's lost needle says no chunk holding it is in its list, and shows the chunk
        # that does; every miss says its rank or its reason
        page.select_option("[data-testid=miss-config]", pick)
        settled(page)
        misses = page.locator("[data-testid=miss]")
        assert misses.count() >= 2
        lost = page.locator(f"[data-testid=miss][data-query^='{needle}:']").first
        assert "no chunk holding the needle is in its top" in lost.locator("[data-testid=miss-reason]").inner_text()
        assert lost.locator("[data-testid=needle-chunk] mark").count() >= 1
        for i in range(misses.count()):
            reason = misses.nth(i).locator("[data-testid=miss-reason]").inner_text()
            assert ("ranked" in reason and "past the budget" in reason) or "no chunk" in reason, reason
        shot(page, page.locator("#misses"), "misses.png")

        # two runs side by side: what changed, and the flipped needle
        page.select_option("[data-testid=history-config]", pick)
        settled(page)
        page.select_option("[data-testid=run-a]", previous)
        settled(page)
        page.select_option("[data-testid=run-b]", "flipped")
        settled(page)
        changes = page.inner_text("[data-testid=run-changes]")
        # in words, a nested setting by its dotted name
        assert "top_k: 25 -> 5" in changes and f"decision.budget: {BUDGET} -> 512" in changes, changes
        assert "bm25" not in changes and "{" not in changes, changes
        # the flipped run lost one of the pick's needles: by its figures the pick is another configuration
        assert f"The pick at {BUDGET} tokens changed from {winner} in run A to " in changes, changes
        flipped = page.locator(f"[data-testid=flipped] li[data-needle='{needle}']")
        assert flipped.count() == 1 and "1 in A -> 0 in B" in flipped.inner_text()
        page.locator("#history").screenshot(path=str(ARTEFACTS / "history.png"))
        browser.close()


def overlapping_labels(page) -> list:
    """Pairs of x-axis labels of any chart whose boxes touch (the labels of one axis share their y)."""
    return page.evaluate("""() => {
      const clashes = [];
      for (const svg of document.querySelectorAll("svg")) {
        const rows = {};
        for (const t of svg.querySelectorAll("text:not([transform])")) (rows[t.getAttribute("y")] = rows[t.getAttribute("y")] || []).push(t);
        for (const labels of Object.values(rows)) {
          const boxes = labels.map(t => [t.getBoundingClientRect(), t.textContent]).sort((a, b) => a[0].left - b[0].left);
          for (let i = 1; i < boxes.length; i++) if (boxes[i][0].left < boxes[i - 1][0].right) clashes.push([boxes[i - 1][1], boxes[i][1]]);
        }
      }
      return clashes;
    }""")


def test_the_page_draws_the_pick_last_keeps_its_state_in_the_address_filters_and_exports(evaluated, tmp_path):
    """Over HTTP as `rag-assets ui` serves it, at 1280x800 and 1920x1080: the pick's budget line drawn last and
    emphasised; any configuration added to the chart and removed; a section the navigation jumps to lands below
    the sticky header; no axis labels run together; a slow change shows that it is working; the view's state in
    the address (a link opens the same pair and filters); the comparison and the per-needle tables exported as
    CSV; the needles filtered by outcome, phrasing and text."""
    import csv as csv_module

    from playwright.sync_api import sync_playwright

    from rag_assets.runner.report_server import serve_report

    with duckdb.connect(str(duckdb_path(evaluated)), read_only=True) as connection:
        decision = stored_decision(connection)
    pick = key_of(decision["model"], decision["strategy"], decision["retriever"])
    server = serve_report(evaluated / "report", 0)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for width, height in ((1280, 800), (1920, 1080)):
                page = browser.new_page(viewport={"width": width, "height": height}, accept_downloads=True)
                errors = []
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.goto(server.address)
                page.wait_for_selector("body[data-ready]", timeout=60_000)
                assert page.get_attribute("body", "data-ready") == "true" and not errors, errors
                # the pick's line is the last drawn (over an identical runner-up), and wider
                series = page.locator("#budget-chart svg g.series")
                assert series.last.get_attribute("data-key") == pick
                assert "emphasis" in series.last.get_attribute("class")
                assert overlapping_labels(page) == [], overlapping_labels(page)
                page.screenshot(path=str(ARTEFACTS / f"page-{width}.png"))
            drawn = series.count()
            # any configuration can be added to the chart, and removed again
            extra = page.evaluate("() => [...document.querySelectorAll('[data-testid=add-series] option')].map(o => o.value).filter(Boolean)[0]")
            assert extra, "every configuration is drawn already"
            page.select_option("[data-testid=add-series]", extra)
            assert series.count() == drawn + 1 and "chart=" in page.url
            assert page.locator(f"#budget-chart svg g.series[data-key='{extra}']").count() == 1
            assert series.last.get_attribute("data-key") == pick  # still drawn last
            page.locator(f"#budget-chart .legend span[data-key='{extra}'] [data-testid=remove-series]").click()
            assert series.count() == drawn and page.locator(f"#budget-chart svg g.series[data-key='{extra}']").count() == 0
            # a section the navigation jumps to lands below the sticky header, its table's column names too
            page.click("header nav a[href='#comparison']")
            page.wait_for_timeout(300)
            header = page.locator("header").bounding_box()
            assert page.locator("#comparison h2").bounding_box()["y"] >= header["y"] + header["height"] - 1
            assert page.locator("#comparison th").first.bounding_box()["y"] >= header["y"] + header["height"] - 1
            # a slow change shows that it is working
            page.evaluate("""() => { window.busySeen = false; new MutationObserver(() => {
                if (!document.getElementById('busy').hidden) window.busySeen = true; })
                .observe(document.getElementById('busy'), {attributes: true}); }""")
            other = page.evaluate(f"() => D.configurations.map(c => c.key).find(k => k !== '{pick}' && D.needle_values[k])")
            page.select_option("[data-testid=side-a]", other)
            settled(page)
            assert page.evaluate("() => window.busySeen") is True
            page.select_option("[data-testid=side-outcome]", "tie")
            settled(page)
            assert "Tied needles" in page.inner_text("[data-testid=side-needles]")
            # the state is in the address: a link opens the same pair and filter
            link = page.url
            assert "a=" in link and "so=tie" in link, link
            again = browser.new_page(viewport={"width": 1280, "height": 800})
            again.goto(link)
            again.wait_for_selector("body[data-ready]", timeout=60_000)
            assert again.input_value("[data-testid=side-a]") == other
            assert again.input_value("[data-testid=side-outcome]") == "tie"
            assert "Tied needles" in again.inner_text("[data-testid=side-needles]")
            again.close()
            # the needles filtered by text: one needle's id leaves that needle alone
            shown = page.locator("[data-testid=side-needles] [data-testid=needle]")
            assert shown.count() >= 1
            one = shown.first.get_attribute("data-needle")
            page.fill("[data-testid=side-text]", one)
            settled(page)
            assert [shown.nth(i).get_attribute("data-needle") for i in range(shown.count())] == [one]
            # exported as CSV: the needles shown, and every configuration the table shows
            with page.expect_download() as download:
                page.click("[data-testid=export-needles]")
            needles = list(csv_module.reader(open(download.value.path(), newline="")))
            assert needles[0] == ["needle_id", "needle", "A", "B", "outcome"] and [r[0] for r in needles[1:]] == [one]
            assert needles[1][4] == "tied"
            with page.expect_download() as download:
                page.click("[data-testid=export-comparison]")
            table = list(csv_module.reader(open(download.value.path(), newline="")))
            rows = page.locator("[data-testid=comparison-table] tbody tr").count()
            assert table[0][:4] == ["name", "rank", "model", "strategy"] and len(table) == rows + 1
            assert decision["measure"] + "_low" in table[0]
            names = {r[0] for r in table[1:]}
            assert f"{decision['model']}: {decision['strategy']} x {decision['retriever']}" in names
            browser.close()
    finally:
        server.stop()
