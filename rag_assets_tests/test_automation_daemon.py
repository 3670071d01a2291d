"""End to end with the real daemon: `dagster dev` on a tiny home; a copied model's weights change, one
observation, and the automation sensor rebuilds that model's partitions down to the metrics by
itself. DuckDB then holds both revisions side by side; no other model's partition was rebuilt."""

import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from rag_assets.lib.store import paths
from rag_assets_tests.assets.test_automation import copy_wordllama, flip_a_weight
from rag_assets_tests.servers import (
    PROJECT,
    DagsterDev,
    register_wordllama_copy,
    tiny_home_env,
)

pytestmark = [pytest.mark.integration, pytest.mark.servers]

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


FINISHED = (DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED)


def _last_metrics_run(home: Path) -> DagsterRunStatus | None:
    """The status of the newest run the automation sensor launched for retrieval_metrics."""
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        runs = [r for r in instance.get_runs(filters=RunsFilter(tags={"rag_assets/trigger": "automation"}))
                if any(key.to_user_string() == "retrieval_metrics" for key in r.asset_selection or ())]
    return runs[0].status if runs else None


def test_the_daemon_rebuilds_a_changed_model_down_to_the_metrics(tmp_path):
    home = tmp_path / "home"
    model = copy_wordllama(tmp_path / "wordllama-copy")
    env = tiny_home_env(home, register_wordllama_copy(model, tmp_path / "models.json"))
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
        revisions, metrics_run = {}, None
        # until the new revision is evaluated and that run has finished (its checks included)
        while time.monotonic() < deadline and (len(revisions) < 2 or metrics_run not in FINISHED):
            time.sleep(5)
            revisions, metrics_run = _revisions(database), _last_metrics_run(home)
    finally:
        server.stop()
    log = (tmp_path / "dagster-dev.log").read_text(errors="replace")
    assert len(revisions) == 2, f"no rebuild within {POLL_SECONDS} s: {revisions}\n{log[-4000:]}"
    assert metrics_run == DagsterRunStatus.SUCCESS, f"the automation's metrics run ended {metrics_run}\n{log[-4000:]}"
    assert revisions[before] == 1 and sum(revisions.values()) == 2  # one run per revision, side by side
    with duckdb.connect(str(database), read_only=True) as connection:
        latest = connection.sql("SELECT DISTINCT model, revision FROM latest_results ORDER BY ALL").fetchall()
    assert ("wordllama-copy", before) not in latest and any(m == "wordllama-copy" for m, _ in latest)
    # exactly that model's partitions were rebuilt
    assert {p: p.stat().st_mtime_ns for p in others} == others


def _nightly_metrics_runs(home: Path) -> list:
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        return [run for run in instance.get_runs(filters=RunsFilter(job_name="evaluation_metrics",
                                                                     tags={"rag_assets/trigger": "nightly"}))]


def test_a_night_after_a_weight_change_rebuilds_it_and_evaluates_through_the_daemon(tmp_path):
    """The nightly schedule every minute, the automation off: after a model's weights change, the night's
    observation, then nightly_completion's rebuild of that model, then one evaluation that passes its checks
    and holds the new revision. No run fails on the way."""
    home = tmp_path / "home"
    model = copy_wordllama(tmp_path / "wordllama-copy")
    env = tiny_home_env(home, register_wordllama_copy(model, tmp_path / "models.json"))
    command = [sys.executable, "-m", "rag_assets.cli"]
    evaluate = subprocess.run([*command, "evaluate", "--models", "wordllama-copy", "--strategies", "boundaries"],
                              env=env, capture_output=True, text=True, cwd=PROJECT)
    assert evaluate.returncode == 0, evaluate.stdout[-3000:] + evaluate.stderr[-3000:]
    [before] = _revisions(paths.duckdb_path(home))
    flip_a_weight(model)
    env.update(RAG_ASSETS_NIGHTLY_CRON="* * * * *", RAG_ASSETS_AUTOMATION="stopped")
    server = DagsterDev(env, tmp_path / "dagster-dev.log")
    try:
        server.wait_until_up()
        deadline = time.monotonic() + POLL_SECONDS
        runs = []
        while time.monotonic() < deadline and not any(run.status in FINISHED for run in runs):
            time.sleep(5)
            runs = _nightly_metrics_runs(home)
    finally:
        stopping = time.time()
        server.stop()
    log = (tmp_path / "dagster-dev.log").read_text(errors="replace")
    assert runs, f"no nightly evaluation within {POLL_SECONDS} s\n{log[-4000:]}"
    first = runs[-1]  # newest first: the first night's
    assert first.status == DagsterRunStatus.SUCCESS, f"the night's evaluation ended {first.status}\n{log[-4000:]}"
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        everything = instance.get_runs()
        # the night's runs: those created before its evaluation ended (the schedule fires every minute, and a
        # run it queues while the server is being stopped fails to start: that is the next night's, not this);
        # a run of another schedule (external_observation, every 15 minutes) that the stopping server could not
        # launch failed because of the stop, not of the night
        night_ended = instance.get_run_record_by_id(first.run_id).end_time
        records = {run.run_id: instance.get_run_record_by_id(run.run_id) for run in everything}
        failed = [(run.job_name, run.run_id[:8]) for run in everything if run.status == DagsterRunStatus.FAILURE
                  and records[run.run_id].create_timestamp.timestamp() < night_ended
                  and (records[run.run_id].end_time or 0) < stopping]
        rebuilt = [run.tags.get("dagster/partition") for run in everything if run.job_name == "model_partition"
                   and run.tags.get("rag_assets/trigger") == "nightly"]
    assert not failed, failed
    assert rebuilt == ["wordllama-copy|boundaries"]  # that model's partition, by the night, once
    revisions = _revisions(paths.duckdb_path(home))
    assert set(revisions) == {before, *revisions} and len(revisions) == 2  # the new revision evaluated beside the old
