"""Faults that must lose nothing and never leave a storage folder that hangs (issue 16)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from dagster import DagsterInstance

from rag_assets_tests.servers import tiny_home_env

PROJECT = Path(__file__).resolve().parents[1]
POOL = "duckdb_write"


def held_slots(home: Path) -> list[str]:
    """Run ids holding a slot of the DuckDB writers' pool, read from the instance as it is now."""
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        if POOL not in instance.event_log_storage.get_concurrency_keys():
            return []
        return [slot.run_id for slot in instance.event_log_storage.get_concurrency_info(POOL).claimed_slots]


def evaluate(env: dict, **options) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", "wordllama",
                             "--strategies", "boundaries", "--rebuild"], env=env, cwd=PROJECT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **options)


def test_a_run_killed_while_writing_duckdb_does_not_hold_the_writers_slot_for_ever(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    first = evaluate(env)
    for line in first.stdout:  # the progress lines, as a person sees them
        if "running evaluation_metrics" in line:
            break
    while first.poll() is None and not held_slots(home):
        time.sleep(0.02)
    assert first.poll() is None, "the metrics step ended before it could be killed"
    os.kill(first.pid, signal.SIGKILL)  # kill -9 while it holds the only DuckDB writer's slot
    first.wait()
    [dead_run] = held_slots(home)

    # the next evaluation frees the dead run's slot, says so, and completes (it waited for ever before)
    second = evaluate(env)
    output, _ = second.communicate(timeout=900)  # a guard against a hang, not a speed limit
    assert second.returncode == 0, output[-3000:]
    assert f"released the DuckDB writers' slot held by run {dead_run}" in output
    assert held_slots(home) == []
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        assert instance.get_run_by_id(dead_run).is_failure  # the killed run is recorded as failed


def test_a_run_whose_stamps_disagree_records_nothing_and_the_latest_result_stays_the_good_one(
        tmp_path, tiny_corpus, tiny_needles):
    """Two strategies evaluated; then one document added and one strategy rebuilt: the other strategy's
    partition is of the old snapshot, so the metrics must refuse the mix before writing anything."""
    import shutil

    import duckdb
    import pytest

    from rag_assets.resources import RagSettings
    from rag_assets.runner import materialize_all
    from rag_assets_tests.fakes import FakeEmbeddingModels

    corpus = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, corpus)
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    instance, models = DagsterInstance.ephemeral(), FakeEmbeddingModels()
    run = dict(settings=settings, instance=instance, models=models, model_keys=["all-MiniLM-L6-v2"],
               progress=lambda _: None)
    materialize_all(strategies=["boundaries", "blind"], **run)
    database = Path(settings.home) / "metrics.duckdb"
    with duckdb.connect(str(database), read_only=True) as connection:
        [(good_run, snapshots)] = connection.sql(
            "SELECT run_id, count(DISTINCT snapshot_id) FROM latest_results GROUP BY run_id").fetchall()

    (corpus / "added.md").write_text("# Added\n\nA new page about sets and frozensets in Python.\n")
    with pytest.raises(Exception, match="nothing was recorded") as refused:
        materialize_all(strategies=["boundaries"], **run)
    assert "snapshot" in str(refused.value)
    with duckdb.connect(str(database), read_only=True) as connection:
        assert connection.sql("SELECT count(*) FROM evaluation_runs").fetchall() == [(1,)]
        assert connection.sql("SELECT DISTINCT run_id FROM latest_results").fetchall() == [(good_run,)]
    assert snapshots == 1


def test_a_rejected_evaluation_set_does_not_replace_the_good_one(tmp_path, tiny_corpus, tiny_needles):
    import json

    import pytest

    from rag_assets.lib import paths
    from rag_assets.resources import RagSettings
    from rag_assets.runner import materialize_all
    from rag_assets_tests.fakes import FakeEmbeddingModels

    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    instance, models = DagsterInstance.ephemeral(), FakeEmbeddingModels()
    run = dict(instance=instance, models=models, model_keys=["all-MiniLM-L6-v2"], strategies=["boundaries"],
               progress=lambda _: None)
    materialize_all(settings=settings, **run)
    stored = paths.partition_path(Path(settings.home), "eval_set")
    good = stored.read_bytes()

    bad = tmp_path / "bad.jsonl"
    lines = tiny_needles.read_text().splitlines()
    needle = json.loads(lines[0]) | {"needle": "This sentence is nowhere in the corpus."}
    bad.write_text("\n".join([json.dumps(needle), *lines[1:]]) + "\n")
    with pytest.raises(Exception) as refused:
        materialize_all(settings=RagSettings(home=settings.home, corpus_dir=settings.corpus_dir, eval_set=str(bad),
                                             out_of_domain=settings.out_of_domain), **run)
    assert stored.read_bytes() == good  # the good set is still the one stored
    assert needle["id"] in str(refused.value) and "not written" in str(refused.value)
