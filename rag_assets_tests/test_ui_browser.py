"""The Dagster UI as a person sees it, in a real browser: `dagster dev` on a free port of 127.0.0.1
against a tiny evaluated project, driven through Debian's `chromium` with Playwright for Python.

Never skipped: without chromium or Playwright it fails, naming what to install (`.ci/run` installs
both). Screenshots of what it looked at are kept under ``test-artefacts/ui/`` (and the README's
current ones come from `docs/screenshots.py`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dagster import DagsterInstance

from rag_assets.definitions import ASSETS
from rag_assets.lib.evaluate.page import page_address
from rag_assets.runner.report_server import serve_report
from rag_assets.tags import TRIGGER_TAG
from rag_assets_tests.assets.test_automation import copy_wordllama, flip_a_weight
from rag_assets_tests.servers import (
    DagsterDev,
    free_port,
    graphql,
    register_wordllama_copy,
    tiny_home_env,
)

pytestmark = [pytest.mark.servers, pytest.mark.browser]

PROJECT = Path(__file__).resolve().parents[1]
ARTEFACTS = PROJECT / "test-artefacts" / "ui"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
GROUPS = ["corpus", "evaluation", "chunks", "embeddings", "retrieval", "metrics"]
STALE_QUERY = """query($key: AssetKeyInput!, $partitions: [String!]) {
  assetNodeOrError(assetKey: $key) { ... on AssetNode { staleStatusByPartition(partitions: $partitions) } } }"""


RUNS_QUERY = """{ runsOrError(limit: 20) { ... on Runs { results { runId status tags { key value } } } } }"""
RUN_QUERY = """query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }"""
REPOSITORY = {"repositoryLocationName": "rag_assets", "repositoryName": "__repository__"}
ADD_PARTITION = """mutation($repo: RepositorySelector!, $key: String!) { addDynamicPartition(
  repositorySelector: $repo, partitionsDefName: "model", partitionKey: $key) { __typename } }"""
LAUNCH_RUN = """mutation($params: ExecutionParams!) { launchRun(executionParams: $params) { __typename
  ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }"""


def run_status(url: str, run_id: str) -> str:
    return graphql(url, RUN_QUERY, {"id": run_id})["runOrError"]["status"]


def stale_by_partition(url: str, asset: str, partitions: list[str]) -> dict[str, str]:
    data = graphql(url, STALE_QUERY, {"key": {"path": [asset]}, "partitions": partitions})
    return dict(zip(partitions, data["assetNodeOrError"]["staleStatusByPartition"]))


def skip_the_prompt(page, wait_s: float = 0.0) -> None:
    """Close the first visit's newsletter prompt, waiting up to ``wait_s`` for it (on a busy machine it opens
    seconds after the page has settled, over whatever the test clicks next)."""
    skip = page.get_by_role("button", name="Skip")
    if wait_s:
        try:
            skip.first.wait_for(state="visible", timeout=wait_s * 1000)
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: no prompt this time
            return
    if skip.count():
        skip.first.click()
        time.sleep(0.5)


def open_page(page, url: str, shot: str | None = None, settle: float = 3.0, prompt_wait_s: float = 0.0):
    page.goto(url, wait_until="networkidle")
    time.sleep(settle)
    skip_the_prompt(page, prompt_wait_s)
    if shot:
        page.screenshot(path=str(ARTEFACTS / f"{shot}.png"), full_page=True)
    return page.inner_text("body")


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(2)
    raise AssertionError(f"waited {seconds:.0f} s for {what}")


def test_a_person_sees_the_pipeline_metrics_checks_schemas_and_stale_partitions(tmp_path):
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: apt-get install chromium (.ci/run does it)"
    from playwright.sync_api import (
        sync_playwright,  # the [test] extra; `playwright install` is never needed
    )

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    model = copy_wordllama(tmp_path / "wordllama-copy")
    env = tiny_home_env(tmp_path / "home", register_wordllama_copy(model, tmp_path / "models.json"))
    env["RAG_ASSETS_AUTOMATION"] = "stopped"  # the stale state must stay visible; no sensor rebuilds it
    env["RAG_ASSETS_REPORT_PORT"] = str(free_port())  # where `rag-assets ui` would serve the page
    subprocess.run([sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", "wordllama", "wordllama-copy",
                    "--strategies", "boundaries"], env=env, check=True, capture_output=True, cwd=PROJECT)
    partitions = ["wordllama|boundaries", "wordllama-copy|boundaries"]
    server = DagsterDev(env, tmp_path / "dagster-dev.log")
    # the evaluation page, served as `rag-assets ui` serves it beside `dagster dev` (runner/report_server.py)
    report = serve_report(tmp_path / "home" / "report", int(env["RAG_ASSETS_REPORT_PORT"]))
    try:
        server.wait_until_up()
        assert set(stale_by_partition(server.url, "retrieval_runs", partitions).values()) == {"FRESH"}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 950})

            # the lineage page: every group, expanded, lists every asset of the pipeline
            open_page(page, server.url + "/asset-groups", prompt_wait_s=15)  # the browser's first visit: the prompt
            for group in GROUPS:  # open each group of the tree beside the graph: its caret, left of its name
                skip_the_prompt(page)
                box = page.get_by_text(group, exact=True).first.bounding_box()
                page.mouse.click(box["x"] - 35, box["y"] + box["height"] / 2)
                time.sleep(0.7)
            page.screenshot(path=str(ARTEFACTS / "lineage.png"))
            lineage = page.inner_text("body")
            missing = [a.key.to_user_string() for a in ASSETS if a.key.to_user_string() not in lineage]
            assert not missing, f"the lineage page does not list {missing}"

            # the metrics page, on a 1280x800 screen: the comparison table, both plots and the worst-queries preview
            page.set_viewport_size({"width": 1280, "height": 800})
            metrics = open_page(page, server.url + "/assets/retrieval_metrics", "metrics")
            for label in ("decision", "evaluation_page", "verdict", "shipped", "success_at_1024_tokens", "comparison",
                          "comparisons", "chunk_stats", "plots", "mrr"):
                assert label in metrics, label
            # the first entries: the decision, then the evaluation page's address, then the verdict
            assert metrics.index("evaluation_page") < metrics.index("verdict") < metrics.index("shipped")
            address = page_address(report.port)
            assert address in metrics  # an http address, naming no folder
            # the decision: a short first line Dagster shows in the table itself, the detail below it
            decision = metrics[metrics.index("decision"):metrics.index("evaluation_page")]
            assert "Ship " in decision and "at 1024 tokens" in decision, decision
            # ... and fits the screen: no entry (an inline table, a path) widens the Value column past its edge
            first_line = page.locator("td", has_text=re.compile(r"^Ship ")).locator("p").first
            assert first_line.is_visible() and first_line.inner_text().endswith("at 1024 tokens"), first_line
            line_box = first_line.bounding_box()
            assert line_box["x"] + line_box["width"] <= 1280, line_box
            value_edges = page.evaluate("""() => Array.from(document.querySelectorAll('table tr')).filter(
                tr => tr.children.length === 3).map(tr => [tr.children[0].innerText,
                Math.round(tr.children[2].getBoundingClientRect().right)])""")
            assert len(value_edges) > 10 and all(right <= 1280 for _, right in value_edges), value_edges
            link = page.locator(f'a[href="{address}"]').first
            assert link.count() == 1, "the evaluation_page entry is not a link"
            box = link.bounding_box()
            assert box and box["x"] + box["width"] <= 1280, box  # within a 1280-pixel screen
            if link.get_attribute("target") == "_blank":
                with page.context.expect_page() as opened:
                    link.click()
                evaluation = opened.value
            else:
                link.click()
                evaluation = page
            evaluation.wait_for_load_state("networkidle")
            assert evaluation.url == address and "Ship " in evaluation.inner_text("body")  # a click opens the page
            evaluation.screenshot(path=str(ARTEFACTS / "evaluation-page-from-ui.png"))
            if evaluation is not page:
                evaluation.close()
            else:
                metrics = open_page(page, server.url + "/assets/retrieval_metrics")
            page.get_by_text("[Show Markdown]").first.click()  # the verdict
            time.sleep(1)
            shown = page.inner_text("body")
            assert "Verdict at 1024 context tokens" in shown and "\n  Ship " in shown, shown[-2000:]
            page.keyboard.press("Escape")
            page.get_by_text("[Show Markdown]").nth(1).click()  # the comparison table, best first
            time.sleep(1)
            shown = page.inner_text("body")
            assert "wordllama-copy" in shown and "S@1024t" in shown
            page.keyboard.press("Escape")
            plots = page.locator("img[src^='data:image/png']")
            if not plots.count():  # the plots render when their Markdown is opened: the link in their own row
                page.locator("tr", has=page.locator("td", has_text=re.compile(r"^plots$"))).get_by_text(
                    "[Show Markdown]").click()
                time.sleep(1)
            assert page.locator("img[src^='data:image/png']").count() >= 3, "the plots are not shown"
            page.screenshot(path=str(ARTEFACTS / "metrics-plots.png"))
            page.keyboard.press("Escape")

            # the sensors say what they do, and the nightly one's cursor what it waits for, in words
            sensor = open_page(page, server.url + "/locations/__repository__@rag_assets/sensors/nightly_completion", "sensor-nightly")
            assert "Completes each night the nightly_evaluation schedule starts" in sensor, sensor[:2000]
            cursor = sensor[sensor.index("Cursor"):]
            assert cursor.split("\n", 1)[1].lstrip().startswith(("no night started yet", "night of ")), cursor[:300]
            registry_sensor = open_page(page, server.url + "/locations/__repository__@rag_assets/sensors/model_registry", "sensor-registry")
            assert "adds a `model` or `strategy` partition for each entry" in registry_sensor or \
                "adds a model or strategy partition for each entry" in registry_sensor, registry_sensor[:2000]

            # a check result is visible, with its description
            checks = open_page(page, server.url + "/assets/retrieval_metrics?view=checks", "checks")
            assert "built from the same snapshot" in checks
            # its own row in the list of checks says it passed, in words and with the green icon
            row = page.locator("[class*='checkRow']", has_text="metrics_stamps_agree")
            assert row.count() == 1, "the check's row is not shown"
            assert row.inner_text().split() == ["metrics_stamps_agree", "metrics_stamps_agree", "Succeeded"], \
                row.inner_text()
            assert row.locator("[aria-label='check_circle']").count() == 1

            # the catalog shows row counts and column schemas (Dagster's standard metadata)
            chunks = open_page(page, server.url + "/assets/chunks", "chunks")
            assert "Row count" in chunks and "Columns" in chunks
            assert "chunk_id" in chunks and "span_start" in chunks and "sample_chunks" in chunks

            # a model's weights change; "Observe" in the UI; its partitions, and only its, show stale
            flip_a_weight(model)
            open_page(page, server.url + "/assets/embedding_model")
            page.get_by_role("button", name="Observe").first.click()
            time.sleep(1)
            confirm = page.get_by_role("button", name="Observe").last  # a dialog names the partitions
            if confirm.is_visible():
                confirm.click()
            stale = wait_for(lambda: (s := stale_by_partition(server.url, "retrieval_runs", partitions))
                             ["wordllama-copy|boundaries"] == "STALE" and s, 240, "the observation to land")
            assert stale == {"wordllama|boundaries": "FRESH", "wordllama-copy|boundaries": "STALE"}
            assert stale_by_partition(server.url, "embeddings", partitions)["wordllama-copy|boundaries"] == "STALE"
            events = open_page(page, server.url + "/assets/embedding_model?view=events", "revision")
            assert "weights_mb" in events and "package" in events, "the observation does not describe the weights"
            open_page(page, server.url + "/assets/embeddings?view=partitions", "partitions")
            for text in ("wordllama-copy", "boundaries"):  # the changed model's partition
                page.get_by_text(text, exact=True).first.click()
                time.sleep(2)
            page.screenshot(path=str(ARTEFACTS / "partitions-stale.png"), full_page=True)
            assert "Unsynced" in page.inner_text("body"), "the changed partition is not shown unsynced"

            # the README: "select assets and Materialize; a partitioned asset asks which partitions"
            open_page(page, server.url + "/assets/embeddings")
            page.locator("button", has_text=re.compile("^Materialize")).first.click()  # "Materialize…"
            dialog = wait_for(lambda: "Partition selection" in (text := page.inner_text("body")) and text, 30,
                              "the partitions dialog")
            asked = dialog[dialog.index("Launch runs to materialize embeddings"):]
            assert "\nmodel\n" in asked and "\nstrategy\n" in asked, "the dialog does not ask for both dimensions"
            page.screenshot(path=str(ARTEFACTS / "materialize-partitions.png"))
            page.keyboard.press("Escape")

            # an asset materialised from the UI: its run carries the trigger tag `ui` (the docs' claim)
            open_page(page, server.url + "/assets/corpus_snapshot")
            page.locator("button", has_text=re.compile("^Materialize$")).first.click()
            run_id = wait_for(lambda: next((r["runId"] for r in graphql(server.url, RUNS_QUERY, {})[
                "runsOrError"]["results"] if {"key": TRIGGER_TAG, "value": "ui"} in r["tags"]), None), 60,
                "a run launched from the UI, tagged ui")
            wait_for(lambda: run_status(server.url, run_id) in ("SUCCESS", "FAILURE"), 240, "the UI's run to end")
            assert run_status(server.url, run_id) == "SUCCESS"
            runs = open_page(page, server.url + "/runs?q%5B0%5D=tag%3Arag_assets%2Ftrigger%3Dui", "runs-by-trigger")
            assert run_id[:8] in runs, "the runs list filtered by rag_assets/trigger=ui does not show the run"
            browser.close()

        # a model registered while the UI runs gets its partition from the model_registry sensor: no restart
        registry = tmp_path / "models.json"
        entries = json.loads(registry.read_text())
        registry.write_text(json.dumps(entries + [{**entries[0], "key": "wordllama-late"}]))
        with DagsterInstance.from_config(str(tmp_path / "home" / "dagster")) as instance:
            wait_for(lambda: "wordllama-late" in instance.get_dynamic_partitions("model"), 180,
                     "the model_registry sensor to add the new model's partition")

        # a typo in the launch dialog's model dimension: "Add partition", then launch (what the UI sends)
        graphql(server.url, ADD_PARTITION, {"repo": REPOSITORY, "key": "wordllamaboundaries"})
        launched = graphql(server.url, LAUNCH_RUN, {"params": {
            "selector": {**REPOSITORY, "jobName": "__ASSET_JOB", "assetSelection": [{"path": ["embeddings"]}]},
            "executionMetadata": {"tags": [{"key": "dagster/partition", "value": "wordllamaboundaries|boundaries"},
                                           {"key": "dagster/partition/model", "value": "wordllamaboundaries"},
                                           {"key": "dagster/partition/strategy", "value": "boundaries"}]}}})
        typo_run = launched["launchRun"]["run"]["runId"]
        assert run_status(server.url, typo_run) == "FAILURE"
        with DagsterInstance.from_config(str(tmp_path / "home" / "dagster")) as instance:
            assert "wordllamaboundaries" not in instance.get_dynamic_partitions("model")
            messages = [e.message for e in instance.all_logs(typo_run)]
        assert any("'wordllamaboundaries' names no entry of the model registry" in m for m in messages), messages
        assert not any(p.name.startswith("wordllamaboundaries") or "wordllamaboundaries" in str(p)
                       for p in (tmp_path / "home").rglob("*") if "dagster" not in p.parts), "something was written"
    finally:
        server.stop()
        report.stop()
