"""Ctrl-C during `rag-assets evaluate`, at every stage, sent to the process or to its group as a terminal
sends it: exit 130 and one line on stderr, no traceback, no run left "started", and nothing recorded
unless the line says the metrics were."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets_tests.servers import PROJECT, WORDLLAMA, cli, tiny_home_env

pytestmark = [pytest.mark.integration]


def recorded_runs(home: Path) -> int:
    import duckdb

    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        return connection.sql("SELECT count(*) FROM evaluation_runs").fetchall()[0][0]


def unfinished_runs(home: Path) -> list[str]:
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        return [f"{run.job_name} {run.status}" for run in instance.get_runs() if not run.is_finished]


STAGES = ["running observe_inputs", "running evaluation_inputs", "running chunking", "running model_partition",
          "running evaluation_metrics"]


@pytest.mark.servers
@pytest.mark.parametrize("to_group", [False, True], ids=["to-the-process", "to-its-group-as-a-terminal-does"])
def test_ctrl_c_is_honoured_at_every_stage_in_one_line(tmp_path, to_group):
    import os
    import signal
    import time

    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    for stage in STAGES:
        for delay in (0.0, 0.3):
            before = recorded_runs(home)
            process = subprocess.Popen([sys.executable, "-m", "rag_assets.cli", "evaluate", *WORDLLAMA, "--rebuild"],
                                       env=env, cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, start_new_session=to_group)
            for line in process.stdout:
                if line.startswith(f"rag-assets: {stage}"):
                    break
            time.sleep(delay)
            if to_group:
                os.killpg(process.pid, signal.SIGINT)  # the terminal's Ctrl-C: every process of the group
            else:
                process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=300)  # a guard against a hang, not a speed limit
            case = f"{stage} + {delay} s"
            if process.returncode == 0:  # only when the whole command had ended before the signal arrived
                assert stage == STAGES[-1] and "Traceback" not in stderr, (case, stderr)
                continue
            assert process.returncode == 130, (case, stdout[-2000:], stderr[-2000:])
            assert "Traceback" not in stdout + stderr, (case, stderr[-3000:])
            [said] = stderr.strip().splitlines()
            assert said.startswith("rag-assets evaluate: interrupted"), (case, said)
            assert unfinished_runs(home) == [], case  # no run is left "started"
            # nothing new is recorded, unless the metrics had finished and the line says so
            finished = "evaluation_metrics finished" in said and "recorded as a success" in said
            assert recorded_runs(home) == before + finished, (case, said)
