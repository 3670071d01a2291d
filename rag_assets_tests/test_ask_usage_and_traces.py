"""`rag-assets ask` from the command line: bad usage is refused in one line with exit 2 before anything
is created, and the answer is printed even when its trace cannot be written (queued for the next ask)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets_tests.servers import PROJECT, QUESTION, WORDLLAMA, cli, tiny_home_env

pytestmark = [pytest.mark.integration]


def trace_rows(home: Path) -> int:
    import duckdb

    with duckdb.connect(str(home / "traces.duckdb"), read_only=True) as connection:
        return connection.sql("SELECT count(*) FROM ask_traces").fetchall()[0][0]


def test_the_answer_is_printed_even_when_its_trace_cannot_be_written(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    assert cli(env, "ask", QUESTION).returncode == 0 and trace_rows(home) == 1
    # the README's own diagnosis: another process holds traces.duckdb open read-only
    reader = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True);"
                               " print('open', flush=True); sys.stdin.read()", str(home / "traces.duckdb")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "open"
        held = cli(env, "ask", QUESTION)
    finally:
        reader.communicate("")
    assert held.returncode == 0, held.stderr
    assert "Sources:" in held.stdout or "[1]" in held.stdout or "NO ANSWER" in held.stdout, held.stdout
    [warning] = held.stderr.strip().splitlines()
    assert warning.startswith("rag-assets ask: warning: the trace of this question is queued in "), warning
    assert "traces.duckdb" in warning and "lock" in warning.lower()
    assert cli(env, "ask", QUESTION).returncode == 0
    assert trace_rows(home) == 3  # the queued trace was written by the next ask, with its own
    assert not list((home / "traces.pending").glob("*.parquet"))


@pytest.mark.parametrize("arguments", [
    [""], ["   "], [b"caf\xe9 au lait?"], [QUESTION, "--k", "0"], [QUESTION, "--k", "-1"], [QUESTION, "--k", "two"],
    [QUESTION, "--cut", "nan"], [QUESTION, "--cut", "-1"], [QUESTION, "--cut", "inf"], [QUESTION, "--cut", "2.5"],
    [QUESTION, "--budget", "0"], [QUESTION, "--budget", "-5"], ["x" * 8001]],
    ids=["empty", "blank", "not-utf8", "k0", "k-1", "k-two", "cut-nan", "cut-neg", "cut-inf", "cut-2.5", "budget0",
         "budget-5", "too-long"])
def test_ask_refuses_bad_usage_in_one_line_with_exit_2(tmp_path, arguments):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    result = subprocess.run([sys.executable, "-m", "rag_assets.cli", "ask", *arguments], env=env, cwd=PROJECT,
                            capture_output=True)
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, stderr
    assert "Traceback" not in stderr and not result.stdout
    [line] = stderr.strip().splitlines()
    assert line.startswith("rag-assets ask: error: "), line
    assert not home.exists()  # nothing was opened or created


def test_a_damaged_traces_file_is_set_aside_and_the_queued_traces_are_written_to_a_new_one(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    assert cli(env, "ask", QUESTION).returncode == 0 and trace_rows(home) == 1
    damaged = (home / "traces.duckdb").read_bytes()[:100] + b"garbage" * 1000
    (home / "traces.duckdb").write_bytes(damaged)
    queued = home / "traces.pending"  # one queued by an earlier ask that met a lock (before the damage)
    queued.mkdir()
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rag_assets.lib.answer.traces import TRACE_SCHEMA
    pq.write_table(pa.Table.from_pylist([{"question": "queued before", "asked_at": None}], schema=TRACE_SCHEMA),
                   queued / "1-1.parquet")
    asked = cli(env, "ask", QUESTION)
    assert asked.returncode == 0, asked.stderr
    [warning] = asked.stderr.strip().splitlines()
    assert f"{home / 'traces.duckdb'} was damaged (" in warning and "traces.duckdb.damaged-" in warning, warning
    assert "a new one holds this trace and the 1 queued" in warning and "queued in" not in warning, warning
    assert trace_rows(home) == 2 and not list(queued.glob("*.parquet"))
    [aside] = home.glob("traces.duckdb.damaged-*")
    assert aside.read_bytes() == damaged  # kept as it was
    again = cli(env, "ask", QUESTION)  # and from then on, as before
    assert again.returncode == 0 and not again.stderr.strip() and trace_rows(home) == 3
