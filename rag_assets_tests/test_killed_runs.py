"""A run killed with kill -9 (during extraction, embeddings or retrieval, or just after `metrics.duckdb`
was renamed into place) is recorded failed by the next command, and its evaluation is withdrawn: it never
stays "started" nor current."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets_tests.servers import WORDLLAMA, cli, tiny_home_env

pytestmark = [pytest.mark.integration]


KILLER = '''
import os, signal, importlib
module, name, when = os.environ["KILL_AT"].split(":")
target = importlib.import_module(module)
original = getattr(target, name)
def kill_there(*args, **kwargs):
    if when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    result = original(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
setattr(target, name, kill_there)
'''


def killed_at(tmp_path: Path, env: dict, where: str, *args: str) -> None:
    """Runs `rag-assets evaluate` and kill -9s it at ``where`` ("module:function:before|after")."""
    hook = tmp_path / "kill-hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(KILLER)
    result = cli(env | {"PYTHONPATH": str(hook), "KILL_AT": where}, "evaluate", *WORDLLAMA, "--rebuild", *args)
    assert result.returncode == -9, (where, result.stderr[-2000:])


def dagster_runs(home: Path) -> dict[str, str]:
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        return {run.run_id: run.status.value for run in instance.get_runs()}


def evaluation_dagster_runs(home: Path) -> list[str]:
    import duckdb

    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        return [run for (run,) in connection.sql("SELECT dagster_run_id FROM evaluation_runs ORDER BY created_at")
                .fetchall()]


@pytest.mark.parametrize("where", [
    "rag_assets.assets.extraction:extract_entry:before",
    "rag_assets.assets.embeddings:write_embeddings:before",
    "rag_assets.assets.retrieval:retrieve_and_judge:before",
], ids=["extraction", "embeddings", "retrieval"])
def test_a_run_killed_with_kill_9_is_recorded_failed_by_the_next_command(tmp_path, where):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    before = dagster_runs(home)
    killed_at(tmp_path, env, where)
    [ghost] = [run for run, status in dagster_runs(home).items() if run not in before and status == "STARTED"]
    assert dagster_runs(home)[ghost] == "STARTED"  # what the UI's run list would show for ever
    following = cli(env, "evaluate", *WORDLLAMA)
    assert following.returncode == 0, following.stderr[-2000:]
    assert f"run {ghost}" in following.stdout + following.stderr and "recorded as failed" in following.stdout + \
        following.stderr
    assert dagster_runs(home)[ghost] == "FAILURE"
    assert not [run for run, status in dagster_runs(home).items() if status in ("STARTED", "STARTING", "NOT_STARTED")]


def test_a_run_killed_just_after_the_metrics_file_was_renamed_into_place_does_not_stay_current(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    [good] = evaluation_dagster_runs(home)
    killed_at(tmp_path, env, "rag_assets.lib.evaluate.results_store:publish:after")
    [_, dead] = evaluation_dagster_runs(home)  # its rows are the current result, its run is STARTED
    following = cli(env, "report")  # a reader does not judge runs: the rows are still there
    assert following.returncode == 0
    from dagster import DagsterInstance

    from rag_assets.resources import RagSettings
    from rag_assets.runner.evaluation import Runner

    said = []
    with DagsterInstance.from_config(str(home / "dagster")) as instance:  # what every command does first
        Runner(RagSettings(home=str(home)), instance, None, said.append, {}, False)
    assert dagster_runs(home)[dead] == "FAILURE"
    assert evaluation_dagster_runs(home) == [good]  # the failed run's rows are no longer current
    assert any(f"run {dead[:8]}" in line and "withdrawn" in line for line in said), said
    [kept] = home.glob("metrics.duckdb.withdrawn-*")
    assert kept.name == f"metrics.duckdb.withdrawn-{dead[:8]}"
    again = cli(env, "evaluate", *WORDLLAMA)  # the file before is the last good run's: current, or rebuilt
    assert again.returncode == 0, again.stderr[-2000:]
    assert evaluation_dagster_runs(home)[0] == good and dead not in evaluation_dagster_runs(home)
