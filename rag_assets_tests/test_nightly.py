"""The nightly_completion sensor's waiting: on a Dagster instance holding only run records (no
materialisation, so nothing is stale), a tick after the night's observation ended requests the
evaluation run unless some other run is queued, not yet started or in progress."""

import uuid

import pytest
from dagster import (
    DagsterInstance,
    DagsterRun,
    DagsterRunStatus,
    build_sensor_context,
    partition_loading_context,
)

from rag_assets.dagster_compat import job_origin
from rag_assets.definitions import build_definitions
from rag_assets.schedules import nightly_completion

NIGHT = "2026-12-01T02:00:00+00:00"


@pytest.fixture(scope="module")
def repository():
    return build_definitions().get_repository_def()


def add_run(instance: DagsterInstance, job_name: str, status: DagsterRunStatus, **tags: str) -> str:
    run = DagsterRun(job_name=job_name, run_id=str(uuid.uuid4()), status=status, tags=tags,
                     remote_job_origin=job_origin(job_name, "rag_assets"))
    instance.add_run(run)
    return run.run_id


def tick(instance: DagsterInstance, repository):
    context = build_sensor_context(instance=instance, repository_def=repository)
    with partition_loading_context(dynamic_partitions_store=instance):  # what the daemon provides
        return nightly_completion.evaluate_tick(context)


@pytest.fixture
def night():
    """An instance where the night's observation has just succeeded."""
    with DagsterInstance.ephemeral() as instance:
        add_run(instance, "nightly_observation", DagsterRunStatus.SUCCESS,
                **{"dagster/scheduled_execution_time": NIGHT})
        yield instance


def test_with_no_other_run_the_tick_requests_the_nights_evaluation(night, repository):
    result = tick(night, repository)
    assert [(r.job_name, r.run_key) for r in result.run_requests] == [
        ("evaluation_metrics", f"nightly {NIGHT} evaluation")]


@pytest.mark.parametrize("status", [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED,
                                    DagsterRunStatus.STARTING, DagsterRunStatus.STARTED])
def test_a_run_queued_or_in_progress_makes_the_tick_wait(night, repository, status):
    waiting_for = add_run(night, "model_partition", status)
    result = tick(night, repository)
    assert not result.run_requests
    assert "waiting for 1 run(s)" in result.skip_message and waiting_for[:8] in result.skip_message


@pytest.mark.parametrize("status", [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED])
def test_a_finished_run_does_not_hold_the_evaluation_back(night, repository, status):
    add_run(night, "model_partition", status)
    [evaluation] = tick(night, repository).run_requests
    assert evaluation.job_name == "evaluation_metrics"


def test_the_cursor_says_in_words_which_night_it_is_at_and_still_reads_back(night, repository):
    from rag_assets.nightly import CURSOR_MARK, Night

    result = tick(night, repository)
    words, _, state = result.cursor.partition(CURSOR_MARK)
    assert words == f"night of {NIGHT}: evaluated after 0 rebuild round(s)"  # what the sensor's page shows first
    assert Night.of(result.cursor) == Night(tick=NIGHT, done=True, first_seen=Night.of(result.cursor).first_seen)
    assert Night.of(state) == Night.of(result.cursor)  # a cursor written before the words reads back too
    assert Night().dumps().startswith("no night started yet")


def test_the_sensors_say_what_they_do(repository):
    from rag_assets.schedules import model_registry

    for sensor in (nightly_completion, model_registry):
        assert sensor.description and len(sensor.description) > 80, sensor.name
    with DagsterInstance.ephemeral() as instance:
        from rag_assets.lib.embed.models import registry
        from rag_assets.lib.ingest.chunking import STRATEGIES
        from rag_assets.partitions import model_partitions, strategy_partitions

        instance.add_dynamic_partitions(model_partitions.name, list(registry("")))
        instance.add_dynamic_partitions(strategy_partitions.name, list(STRATEGIES))
        result = model_registry.evaluate_tick(build_sensor_context(instance=instance, repository_def=repository))
        assert result.skip_message.startswith("every registered model and strategy has its partition (")


def test_a_strategies_file_written_while_the_ui_runs_gets_its_partitions_from_the_sensor(repository, tmp_path,
                                                                                        monkeypatch):
    """A sweep and a LangChain splitter added to the strategies file after the code location loaded: the next
    model_registry tick adds exactly their strategy partitions (the built-in ones are there), and the tick after
    that has nothing to add."""
    import json

    from rag_assets.lib.embed.models import registry
    from rag_assets.lib.ingest.chunking import STRATEGIES
    from rag_assets.partitions import model_partitions, strategy_partitions
    from rag_assets.schedules import model_registry

    strategies = tmp_path / "strategies.json"
    strategies.write_text(json.dumps([
        {"name": "bh", "header": True, "unit": "tokens", "size": [128, 256], "overlap": [0, 0.25]},
        {"name": "lc", "kind": "langchain", "splitter": "RecursiveCharacterTextSplitter", "unit": "tokens",
         "size": 256}]))
    monkeypatch.setenv("RAG_ASSETS_STRATEGIES_FILE", str(strategies))
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(model_partitions.name, list(registry("")))
        instance.add_dynamic_partitions(strategy_partitions.name, list(STRATEGIES))
        result = model_registry.evaluate_tick(build_sensor_context(instance=instance, repository_def=repository))
        [request] = result.dynamic_partitions_requests
        assert request.partitions_def_name == strategy_partitions.name
        assert sorted(request.partition_keys) == ["bh-128t-o0", "bh-128t-o32", "bh-256t-o0", "bh-256t-o64", "lc"]
        instance.add_dynamic_partitions(strategy_partitions.name, list(request.partition_keys))
        again = model_registry.evaluate_tick(build_sensor_context(instance=instance, repository_def=repository))
        assert again.skip_message.startswith(f"every registered model and strategy has its partition "
                                             f"({len(registry(''))} models, {len(STRATEGIES) + 5} strategies)")
