"""A storage folder copied or restored elsewhere is as warm there as it was in place: nothing of a run's
identity depends on where its storage folder lives."""

from __future__ import annotations

import shutil

import pytest

from rag_assets_tests.servers import WORDLLAMA, cli, tiny_home_env

pytestmark = [pytest.mark.integration]


def test_a_storage_folder_moved_elsewhere_runs_nothing_again(tmp_path):
    first = tmp_path / "first" / "home"
    assert cli(tiny_home_env(first), "evaluate", *WORDLLAMA).returncode == 0
    moved = tmp_path / "restored" / "elsewhere" / "home"
    shutil.copytree(first, moved, symlinks=True)
    shutil.rmtree(tmp_path / "first")  # nothing may still point at the old place
    env = tiny_home_env(moved)
    again = cli(env, "evaluate", *WORDLLAMA)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "up to date: model_partition [wordllama x boundaries]" in again.stdout, again.stdout[-3000:]
    assert "up to date: evaluation_metrics" in again.stdout, again.stdout[-3000:]
    report = cli(env, "report")
    assert report.returncode == 0 and "| wordllama | boundaries | dense |" in report.stdout
    assert f"file://{moved}/report/index.html" in report.stdout
    assert not (tmp_path / "first").exists()
