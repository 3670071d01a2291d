"""A damaged `metrics.duckdb`: every reader names the file and the command that rebuilds it, in one
paragraph; `evaluate` sets it aside (kept) and rebuilds it, from the whole earlier copy when there is one,
and says when the history starts again."""

from __future__ import annotations

import pytest

from rag_assets_tests.servers import WORDLLAMA, cli, halve, one_paragraph, tiny_home_env

pytestmark = [pytest.mark.integration]


def history_runs(env: dict) -> list[str]:
    result = cli(env, "history", "--model", "wordllama", "--strategy", "boundaries")
    assert result.returncode == 0, result.stderr
    return [line.split("|")[1].strip() for line in result.stdout.splitlines() if line.startswith("| ")
            and not line.startswith(("| run", "|---"))]


def test_a_damaged_metrics_database_is_named_set_aside_and_rebuilt_with_the_history_before_it(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    for _ in range(2):  # two evaluation runs: the second keeps the first's file as metrics.duckdb.previous
        assert cli(env, "evaluate", *WORDLLAMA, "--rebuild").returncode == 0
    [first, second] = history_runs(env)
    database = home / "metrics.duckdb"
    assert (home / "metrics.duckdb.previous").exists()
    halve(database)

    # every reader names the file and the command that rebuilds it, in one paragraph, exit 1
    for command in (["report"], ["history"], ["ask", "What is a list?"], ["export", str(tmp_path / "out")]):
        result = cli(env, *command)
        assert result.returncode == 1, (command, result.stderr)
        paragraph = one_paragraph(result, command[0])
        assert f"{database} is damaged" in paragraph and "rag-assets evaluate" in paragraph, paragraph

    # evaluate (also without --rebuild, with nothing else changed) sets it aside, kept, and rebuilds it
    result = cli(env, "evaluate", *WORDLLAMA)
    assert result.returncode == 0, result.stderr[-3000:]
    [aside] = list(home.glob("metrics.duckdb.damaged-*"))
    assert f"warning: {database} was damaged" in result.stdout and aside.name in result.stdout
    assert "comes from metrics.duckdb.previous" in result.stdout
    # the history up to the file before the damaged one, and the run that rebuilt it; the damaged file's own
    # run is said to be only in the file set aside
    runs = history_runs(env)
    assert runs[0] == first and second not in runs and len(runs) == 2
    assert cli(env, "report").returncode == 0


def test_a_damaged_database_without_a_whole_earlier_copy_starts_the_history_again_and_says_so(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0  # the first run: no earlier file to keep
    assert not (home / "metrics.duckdb.previous").exists()
    (home / "metrics.duckdb").write_bytes(b"not a DuckDB file at all\n" * 100)
    result = cli(env, "evaluate", *WORDLLAMA)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "no whole earlier copy (metrics.duckdb.previous)" in result.stdout
    assert len(history_runs(env)) == 1
    [aside] = list(home.glob("metrics.duckdb.damaged-*"))
    assert aside.read_bytes().startswith(b"not a DuckDB file")
