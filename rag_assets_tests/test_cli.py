import subprocess
import sys

import rag_assets


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


def test_report_without_results_says_what_to_run():
    result = _cli("report")
    assert result.returncode == 1
    assert "rag-assets evaluate" in result.stderr
