"""A run killed with kill -9 (during extraction, embeddings or retrieval, or just after `metrics.duckdb`
was renamed into place) is recorded failed by the next command, and its evaluation is withdrawn: it never
stays "started" nor current."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets_tests.servers import WORDLLAMA, cli, tiny_home_env

pytestmark = [pytest.mark.integration]


KILLER = '''
import os, signal, importlib, time
module, name, when = os.environ["KILL_AT"].split(":")
sent = getattr(signal, os.environ.get("KILL_SIGNAL", "SIGKILL"))
target = importlib.import_module(module)
original = getattr(target, name)
def kill_there(*args, **kwargs):
    if when == "before":
        os.kill(os.getpid(), sent)
        time.sleep(1)  # a signal Python handles arrives between two bytecodes: here
    result = original(*args, **kwargs)
    os.kill(os.getpid(), sent)
    time.sleep(1)
    return result
setattr(target, name, kill_there)
'''


def killed_at(tmp_path: Path, env: dict, where: str, *args: str, sent: str = "SIGKILL"):
    """Runs `rag-assets evaluate` and sends it ``sent`` (kill -9 by default) at ``where``
    ("module:function:before|after"); returns the finished command."""
    hook = tmp_path / "kill-hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(KILLER)
    result = cli(env | {"PYTHONPATH": str(hook), "KILL_AT": where, "KILL_SIGNAL": sent}, "evaluate", *WORDLLAMA,
                 "--rebuild", *args)
    if sent == "SIGKILL":
        assert result.returncode == -9, (where, result.stderr[-2000:])
    return result


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


@pytest.mark.parametrize("sent", ["SIGTERM", "SIGINT"])
def test_a_run_stopped_by_a_signal_just_after_the_metrics_file_was_renamed_into_place_is_not_current(tmp_path, sent):
    """SIGTERM or Ctrl-C right after the file was published: the run ends failed, the command says nothing was kept,
    and its evaluation is not the current one (withdrawn at once): what is current is the last run that succeeded,
    which the next evaluate finds up to date (nothing changed since it)."""
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    [good] = evaluation_dagster_runs(home)
    stopped = killed_at(tmp_path, env, "rag_assets.lib.evaluate.results_store:publish:after", sent=sent)
    assert stopped.returncode != 0
    [stopped_run] = [run for run, status in dagster_runs(home).items() if run != good and status == "FAILURE"
                     and run not in evaluation_dagster_runs(home)] or [None]
    assert evaluation_dagster_runs(home)[-1] == good, (stopped.stdout[-2000:], stopped.stderr[-2000:])
    assert stopped_run is not None and list(home.glob(f"metrics.duckdb.withdrawn-{stopped_run[:8]}"))
    assert "nothing" in (stopped.stdout + stopped.stderr).lower()  # the command says nothing was kept
    again = cli(env, "evaluate", *WORDLLAMA)
    assert again.returncode == 0, again.stderr[-2000:]
    assert evaluation_dagster_runs(home)[-1] == good and dagster_runs(home)[good] == "SUCCESS"


def test_a_run_killed_after_dagster_recorded_the_metrics_is_withdrawn_and_the_next_evaluate_runs_them_again(tmp_path):
    """kill -9 during the metrics' checks, after Dagster recorded their materialisation, on a changed corpus: the next
    command withdraws the evaluation (Dagster's run failed), and evaluate does not call the metrics up to date, so
    the history's newest result is the changed corpus's."""
    home, corpus = tmp_path / "home", tmp_path / "corpus"
    import shutil

    from rag_assets_tests.conftest import FIXTURES

    shutil.copytree(FIXTURES / "tiny_corpus", corpus)
    env = tiny_home_env(home) | {"RAG_ASSETS_CORPUS": str(corpus)}
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    [good] = evaluation_dagster_runs(home)
    (corpus / "extra.txt").write_text("A page added after the first evaluation.\n\nIt changes the snapshot.\n")
    killed_at(tmp_path, env, "rag_assets.assets.metrics:latest_regressions:before")
    [dead] = [run for run in evaluation_dagster_runs(home) if run != good]
    following = cli(env, "evaluate", *WORDLLAMA)
    assert following.returncode == 0, following.stderr[-2000:]
    said = following.stdout + following.stderr
    assert f"run {dead[:8]}" in said and "withdrawn" in said, said[-3000:]
    assert "up to date: evaluation_metrics" not in said
    runs = evaluation_dagster_runs(home)
    assert dead not in runs and runs[0] == good and len(runs) == 2  # the newest is this command's, of the new corpus
    import duckdb

    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        snapshots = [s for (s,) in connection.sql("SELECT snapshot_id FROM evaluation_runs ORDER BY created_at").fetchall()]
    assert snapshots[0] != snapshots[1]
