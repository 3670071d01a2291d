"""The layering is a checked contract, and assets stay thin.

- ``lint-imports`` (import-linter, configured in pyproject.toml): cli -> runner -> definitions ->
  schedules -> jobs -> assets -> asset helpers -> resources -> partitions -> lib -> settings; lib/
  in stage packages (answer -> evaluate -> retrieve -> embed, evalsets -> ingest -> store -> formats);
  lib/ and settings never import Dagster; no import cycle at any depth.
- ``ruff check`` (configured in pyproject.toml) passes, Dagster's private API included.
- Every asset, check and observation function reads in at most ``ASSET_LINES`` lines (docstring
  excluded): load inputs, call lib, attach metadata. Logic lives in lib/, tested without Dagster.
"""

import ast
import subprocess
import sys
from pathlib import Path

import rag_assets

PROJECT = Path(rag_assets.__file__).resolve().parents[1]
ASSET_LINES = 30
DECORATORS = {"asset", "asset_check", "observable_source_asset", "multi_asset"}


def test_import_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports), "--config", str(PROJECT / "pyproject.toml")], cwd=PROJECT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def asset_function_lengths(folder: Path) -> dict[str, int]:
    """{module:function: lines without the docstring} of every decorated asset function under folder."""
    lengths = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(_decorator_name(d) in DECORATORS for d in node.decorator_list):
                body = node.body
                docstring = body[0] if body and isinstance(body[0], ast.Expr) and isinstance(
                    getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str) else None
                lines = node.end_lineno - node.lineno + 1
                if docstring is not None:
                    lines -= docstring.end_lineno - docstring.lineno + 1
                lengths[f"{path.stem}:{node.name}"] = lines
    return lengths


def test_asset_functions_are_thin():
    lengths = asset_function_lengths(PROJECT / "rag_assets" / "assets")
    assert len(lengths) >= 10  # every stage and its checks were found
    too_long = {name: lines for name, lines in lengths.items() if lines > ASSET_LINES}
    assert not too_long, f"asset functions over {ASSET_LINES} lines (move the logic into lib/): {too_long}"


def test_the_length_rule_counts_what_it_should(tmp_path):
    (tmp_path / "stage.py").write_text(
        "from dagster import asset\n\n\n@asset(group_name='x')\ndef fat():\n    '''Doc.\n\n    More.\n    '''\n"
        + "    a = 1\n" * 40 + "    return a\n", encoding="utf-8")
    assert asset_function_lengths(tmp_path) == {"stage:fat": 1 + 40 + 1}  # def, body, return


def test_ruff_finds_nothing_and_would_find_a_private_dagster_import(tmp_path):
    """ruff as configured in pyproject.toml (pyflakes, import order, no blind except, and Dagster's
    private API only through rag_assets/dagster_compat.py) passes on the project, and flags a private import."""
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), "check", "--no-cache", "."], cwd=PROJECT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    offender = tmp_path / "offender.py"
    offender.write_text("from dagster._core.definitions.data_version import StaleStatus\n\nprint(StaleStatus)\n")
    result = subprocess.run([str(ruff), "check", "--no-cache", "--config", str(PROJECT / "pyproject.toml"),
                             str(offender)], capture_output=True, text=True)
    assert result.returncode == 1 and "banned-api" in result.stdout and "import-private-name" in result.stdout


def test_a_real_model_in_an_unmarked_test_is_refused():
    """conftest.py keeps the marks true: `make test-fast` never loads a real model by accident."""
    import pytest

    from rag_assets.lib.embed.models import load_model

    with pytest.raises(AssertionError, match="loads the real model wordllama: mark it pytest.mark.integration"):
        load_model("wordllama")
