"""Screenshots of the Dagster UI for the README, taken the way a person would see it.

    .venv/bin/python docs/screenshots.py [OUT_FOLDER]

Builds a tiny home (the tests' corpus, WordLlama and a copy of it registered from a folder),
changes one weight of the copy, observes, and opens `dagster dev` in headless Chromium (Debian's
`chromium`, driven by Playwright for Python): a `retrieval_runs` partition of the changed model,
and `retrieval_metrics`, both unsynced. Writes PNGs to
OUT_FOLDER (default: docs/).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets_tests.assets.test_automation import copy_wordllama, flip_a_weight  # noqa: E402
from rag_assets_tests.servers import DagsterDev, register_wordllama_copy, tiny_home_env  # noqa: E402

FIXTURES = PROJECT / "rag_assets_tests" / "fixtures"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def tiny_home(root: Path) -> dict[str, str]:
    """An evaluated tiny home with a registered model copy; returns the environment that selects it."""
    model = copy_wordllama(root / "wordllama-copy")
    env = tiny_home_env(root / "home", register_wordllama_copy(model, root / "models.json"))
    subprocess.run([sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", "wordllama", "wordllama-copy",
                    "--strategies", "boundaries", "boundaries_header"], env=env, check=True, capture_output=True)
    flip_a_weight(model)
    subprocess.run([sys.executable, "-m", "dagster", "job", "execute", "-m", "rag_assets.definitions", "-j",
                    "observe_inputs"], env=env, check=True, capture_output=True, cwd=PROJECT)
    return env


def main(argv: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    out = Path(argv[0]) if argv else PROJECT / "docs"
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="rag-screens-"))
    env = tiny_home(root)
    env["RAG_ASSETS_AUTOMATION"] = "stopped"  # the stale state, before the sensor rebuilds it
    server = DagsterDev(env, root / "dagster-dev.log")
    try:
        server.wait_until_up()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 950})
            for name, path, clicks in (
                ("stale-retrieval-partitions", "/assets/retrieval_runs?view=partitions",
                 ["wordllama-copy", "boundaries_header"]),
                ("stale-metrics", "/assets/retrieval_metrics", []),
            ):
                page.goto(server.url + path, wait_until="networkidle")
                time.sleep(3)
                skip = page.get_by_role("button", name="Skip")
                if skip.count():
                    skip.first.click()  # the first visit's newsletter prompt
                for text in clicks:
                    page.get_by_text(text, exact=True).first.click()
                    time.sleep(2)
                page.screenshot(path=str(out / f"{name}.png"))
                print(out / f"{name}.png")
            browser.close()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
