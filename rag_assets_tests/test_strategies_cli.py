"""A strategies file through `rag-assets evaluate`: a sweep of ours and a LangChain splitter become partitions,
the verdict carries the size view, the pick is the configuration with the highest success within the budget
(recomputed from the stored rows) and the size view's figures are the stored comparison's."""

from __future__ import annotations

import duckdb
import pytest

from rag_assets.lib.store.paths import duckdb_path
from rag_assets_tests.lib.evaluate.needle_rows import success_by_hand
from rag_assets_tests.servers import cli, tiny_home_env

pytestmark = [pytest.mark.integration]

STRATEGIES = """
[[strategy]]
name = "bh"
header = true
unit = "tokens"
size = [64, 256]
overlap = [0, 0.25]

[[strategy]]
name = "lc"
kind = "langchain"
splitter = "RecursiveCharacterTextSplitter"
unit = "tokens"
size = [64, 256]
"""
SWEPT = ["bh-64t-o0", "bh-64t-o16", "bh-256t-o0", "bh-256t-o64", "lc-64t-o0", "lc-256t-o0"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("swept")
    strategies = folder / "strategies.toml"
    strategies.write_text(STRATEGIES, encoding="utf-8")
    home = folder / "home"
    env = tiny_home_env(home) | {"RAG_ASSETS_STRATEGIES_FILE": str(strategies)}
    result = cli(env, "evaluate", "--models", "wordllama", "--strategies", "boundaries", *SWEPT)
    assert result.returncode == 0, result.stderr[-3000:]
    return home, result


def test_a_sweep_and_a_langchain_splitter_through_evaluate(swept):
    home, result = swept
    assert "Chunk size, on " in result.stdout and "bh (ours): 64t: S@1024t" in result.stdout, result.stdout[-3000:]
    with duckdb.connect(str(duckdb_path(home)), read_only=True) as connection:
        families = dict(connection.sql("SELECT strategy, family FROM strategies").fetchall())
        assert {name: families[name] for name in SWEPT} == {name: name.split("-")[0] for name in SWEPT}
        evaluated = {row[0] for row in connection.sql("SELECT DISTINCT strategy FROM latest_results").fetchall()}
        assert evaluated == {"boundaries", *SWEPT}
        by_hand = success_by_hand(connection, 1024)
        [decision] = connection.sql("SELECT model, strategy, retriever FROM decision").fetchall()
        assert by_hand[decision] == max(value for key, value in by_hand.items() if key[0] != "external")
        points = connection.sql("SELECT model, strategy, retriever, success FROM size_view").fetchall()
        assert points and all(by_hand[(m, s, r)] == success for m, s, r, success in points)
        assert {s for _, s, _, _ in points} == set(SWEPT) | {"boundaries"}
        lines = dict(connection.sql("SELECT strategy, unlocated_chunks FROM read_parquet(?, union_by_name = true)",
                                    params=[str(home / "parquet" / "chunk_quality" / "**" / "*.parquet")]).fetchall())
        assert lines["lc-64t-o0"] == 0


def test_the_pages_size_view_is_the_stored_one(swept):
    from rag_assets.lib.evaluate.page_data import gather

    home, _ = swept
    with duckdb.connect(str(duckdb_path(home)), read_only=True) as connection:
        data = gather(connection, home)
        [(model, retriever)] = connection.sql("SELECT model, retriever FROM decision").fetchall()
        stored = connection.sql("SELECT strategy, success, success_low, success_high, success_at_8, tokens_embedded "
                                "FROM size_view WHERE model = ? AND retriever = ? ORDER BY strategy",
                                params=[model, retriever]).fetchall()
    shown = sorted((p["strategy"], p["success"], p["success_low"], p["success_high"], p["success_at_8"],
                    p["tokens_embedded"]) for p in data["sizes"]["points"])
    assert len(shown) == len(stored) == len(SWEPT) + 1
    for page_row, stored_row in zip(shown, stored):  # the page keeps six decimals
        assert page_row[0] == stored_row[0] and page_row[5] == stored_row[5]
        assert page_row[1:5] == pytest.approx(stored_row[1:5], abs=1e-6)


@pytest.mark.browser
def test_a_person_sees_the_size_view_with_the_stored_numbers(swept):
    from playwright.sync_api import sync_playwright

    from rag_assets_tests.test_page_browser import CHROMIUM, CHROMIUM_ARGS

    home, _ = swept
    page_file = home / "report" / "index.html"
    with duckdb.connect(str(duckdb_path(home)), read_only=True) as connection:
        [(model, retriever)] = connection.sql("SELECT model, retriever FROM decision").fetchall()
        stored = dict(connection.sql("SELECT strategy, success FROM size_view WHERE model = ? AND retriever = ?",
                                     params=[model, retriever]).fetchall())
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("**/*", lambda route: route.continue_() if route.request.url == page_file.as_uri()
                       else route.abort())
            page.goto(page_file.as_uri())
            page.wait_for_selector("body[data-ready]", timeout=60_000)
            assert page.get_attribute("body", "data-ready") == "true"
            rows = page.locator("[data-testid=size-table] tr[data-strategy]")
            shown = {rows.nth(i).get_attribute("data-strategy"): rows.nth(i).locator("td").nth(5).inner_text()
                     for i in range(rows.count())}
            assert page.locator("[data-testid=size-chart] svg .series").count() >= 2
        finally:
            browser.close()
    assert set(shown) == set(stored)
    assert all(shown[strategy].startswith(f"{stored[strategy]:.3f} [") for strategy in stored), shown
