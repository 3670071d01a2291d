"""End to end with the real daemon: `dagster dev` on a tiny home; a copied model's weights change, one
observation, and the automation sensor rebuilds that model's partitions down to the metrics by
itself. DuckDB then holds both revisions side by side; no other model's partition was rebuilt."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from rag_assets.lib import paths
from rag_assets_tests.assets.test_automation import copy_wordllama, flip_a_weight
from rag_assets_tests.servers import PROJECT, DagsterDev

POLL_SECONDS = 420


def _revisions(database: Path) -> dict[str, int]:
    """{revision: evaluation runs} of the copied model, or {} while the file is missing or being written."""
    try:
        with duckdb.connect(str(database), read_only=True) as connection:
            return dict(connection.sql(
                "SELECT revision, count(DISTINCT run_id) FROM retrieval_results WHERE model = 'wordllama-copy' "
                "GROUP BY revision").fetchall())
    except duckdb.Error:
        return {}


def test_the_daemon_rebuilds_a_changed_model_down_to_the_metrics(tmp_path, tiny_corpus, tiny_needles):
    home = tmp_path / "home"
    model = copy_wordllama(tmp_path / "wordllama-copy")
    registry = tmp_path / "models.json"
    registry.write_text(json.dumps([{"key": "wordllama-copy", "loader": "wordllama", "package": "wordllama",
                                     "dimension": 256, "window": None, "folder": str(model)}]))
    env = {**os.environ, "RAG_ASSETS_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"),
           "RAG_ASSETS_CORPUS": str(tiny_corpus), "RAG_ASSETS_EVAL_SET": str(tiny_needles),
           "RAG_ASSETS_OUT_OF_DOMAIN": str(tiny_needles.parent / "tiny_out_of_domain.jsonl"),
           "RAG_ASSETS_MODELS_FILE": str(registry), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "rag_assets.cli"]
    evaluate = subprocess.run([*command, "evaluate", "--strategies", "boundaries"], env=env, capture_output=True,
                              text=True, cwd=PROJECT)
    assert evaluate.returncode == 0, evaluate.stdout[-3000:] + evaluate.stderr[-3000:]
    database = paths.duckdb_path(home)
    [before] = _revisions(database)
    others = {p: p.stat().st_mtime_ns for p in paths.partition_files(home, "embeddings") if "wordllama-copy" not in str(p)}
    assert len(others) == 3  # the three registered models, one strategy each

    flip_a_weight(model)
    server = DagsterDev(env, tmp_path / "dagster-dev.log")
    try:
        server.wait_until_up()
        observe = subprocess.run([sys.executable, "-m", "dagster", "job", "execute", "-m", "rag_assets.definitions",
                                  "-j", "observe_inputs"], env=env, capture_output=True, text=True, cwd=PROJECT)
        assert observe.returncode == 0, observe.stdout[-3000:] + observe.stderr[-3000:]
        deadline = time.monotonic() + POLL_SECONDS
        revisions = {}
        while time.monotonic() < deadline and len(revisions) < 2:
            time.sleep(5)
            revisions = _revisions(database)
    finally:
        server.stop()
    log = (tmp_path / "dagster-dev.log").read_text(errors="replace")
    assert len(revisions) == 2, f"no rebuild within {POLL_SECONDS} s: {revisions}\n{log[-4000:]}"
    assert revisions[before] == 1 and sum(revisions.values()) == 2  # one run per revision, side by side
    with duckdb.connect(str(database), read_only=True) as connection:
        latest = connection.sql("SELECT DISTINCT model, revision FROM latest_results ORDER BY ALL").fetchall()
    assert ("wordllama-copy", before) not in latest and any(m == "wordllama-copy" for m, _ in latest)
    # exactly that model's partitions were rebuilt
    assert {p: p.stat().st_mtime_ns for p in others} == others
