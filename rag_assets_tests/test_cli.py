import subprocess
import sys

import pytest

import rag_assets

pytestmark = pytest.mark.integration


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "rag_assets.cli", *args], capture_output=True, text=True)


def test_version():
    result = _cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"rag-assets {rag_assets.__version__}"


def test_help_lists_commands():
    result = _cli("--help")
    assert result.returncode == 0
    for command in ("evaluate", "report", "ui"):
        assert command in result.stdout


def test_report_without_results_says_what_to_run_with_its_own_exit_status():
    for command in ("report", "history"):
        result = _cli(command)
        assert result.returncode == 4, command  # "nothing to report yet" (README: exit statuses)
        assert "rag-assets evaluate" in result.stderr


def test_a_model_or_strategy_named_twice_is_bad_usage_before_anything_runs(tmp_path, monkeypatch, capsys):
    """Today's failure was a SQLite UNIQUE error from Dagster's partitions table on a fresh home."""
    from rag_assets.cli import main

    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "home"))
    assert main(["evaluate", "--models", "wordllama", "wordllama", "--strategies", "boundaries"]) == 2
    assert capsys.readouterr().err.strip() == (
        "rag-assets evaluate: error: model wordllama named more than once; name each once")
    assert main(["backfill", "--model", "wordllama", "--strategies", "blind", "blind"]) == 2
    assert "strategy blind named more than once" in capsys.readouterr().err
    assert main(["evaluate", "--models", "no-such-model"]) == 2
    assert "unknown model no-such-model; registered:" in capsys.readouterr().err
    assert not (tmp_path / "home").exists()  # nothing was made: no run, not even the Dagster folder
