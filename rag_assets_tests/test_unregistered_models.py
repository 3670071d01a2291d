"""A model evaluated once and then left out of the model registry never blocks the metrics of the
others: `evaluate` says once how to remove its results, `report` leaves it out, and it comes back when
registered again."""

from __future__ import annotations

import pytest

from rag_assets_tests.servers import WORDLLAMA, cli, tiny_home_env

pytestmark = [pytest.mark.integration]


def test_a_model_registered_once_never_blocks_the_metrics_of_the_others(tmp_path):
    from rag_assets_tests.assets.test_automation import copy_wordllama
    from rag_assets_tests.servers import register_wordllama_copy

    home = tmp_path / "home"
    registry = register_wordllama_copy(copy_wordllama(tmp_path / "wordllama-copy"), tmp_path / "models.json")
    with_copy = tiny_home_env(home, registry)
    built = cli(with_copy, "evaluate", "--models", "wordllama", "wordllama-copy", "--strategies", "boundaries")
    assert built.returncode == 0, built.stderr[-2000:]
    without = tiny_home_env(home)  # the registry file is not set any more
    result = cli(without, "evaluate", *WORDLLAMA)
    assert result.returncode == 0, result.stderr[-3000:]
    said = [line for line in (result.stdout + result.stderr).splitlines() if "wordllama-copy" in line]
    notice = [line for line in said if "are not evaluated" in line]
    assert len(notice) == 1, said
    assert "RAG_ASSETS_MODELS_FILE" in notice[0] and "rm -r" in notice[0]
    assert f"{home}/parquet/retrieval_runs/model=wordllama-copy" in notice[0]
    report = cli(without, "report", "--format", "json")
    assert report.returncode == 0 and "wordllama-copy" not in report.stdout and "wordllama" in report.stdout
    back = cli(with_copy, "evaluate", "--models", "wordllama", "wordllama-copy", "--strategies", "boundaries")
    assert back.returncode == 0 and "wordllama-copy" in cli(with_copy, "report", "--format", "json").stdout
