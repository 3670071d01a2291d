"""The instance's run queue: what it adds to Dagster's QueuedRunCoordinator, on a real instance
(the dagster.yaml rag_assets writes), with runs created as the UI, a schedule or the automation would."""

from __future__ import annotations

import pytest
from dagster import AssetKey, DagsterEventType, DagsterRunStatus, QueuedRunCoordinator, SubmitRunContext

from rag_assets.definitions import build_definitions
from rag_assets.instance.dagster_yaml import default_instance
from rag_assets.instance.run_coordinator import RagRunCoordinator
from rag_assets.partitions import model_partitions, model_strategy_key
from rag_assets.resources import RagSettings
from rag_assets.tags import TRIGGER_TAG, trigger_of


@pytest.fixture
def instance(tmp_path, monkeypatch):
    with default_instance(tmp_path / "home") as instance:
        yield instance


def _submit(instance, tmp_path, model: str, tags: dict | None = None, job: str = "model_partition"):
    defs = build_definitions(RagSettings(home=str(tmp_path / "home")))
    key = model_strategy_key(model, "boundaries")
    run = instance.create_run_for_job(job_def=defs.resolve_job_def(job), tags={
        **(tags or {}), **key_tags(key)}, asset_selection=frozenset({AssetKey("embeddings")}))
    return instance.run_coordinator.submit_run(SubmitRunContext(run, workspace=None))


def key_tags(key) -> dict:
    return {"dagster/partition": str(key), **{f"dagster/partition/{d}": k for d, k in key.keys_by_dimension.items()}}


def test_the_instance_queues_runs_through_rag_assets_coordinator(instance):
    assert isinstance(instance.run_coordinator, RagRunCoordinator)


def test_a_run_launched_from_the_ui_is_queued_with_the_ui_trigger_tag(instance, tmp_path, monkeypatch):
    queued = []  # Dagster's queueing needs the run's code location (test_ui_browser launches through it)
    monkeypatch.setattr(QueuedRunCoordinator, "submit_run", lambda self, context: queued.append(
        context.dagster_run.run_id) or self._instance.get_run_by_id(context.dagster_run.run_id))
    run = _submit(instance, tmp_path, "wordllama")
    assert queued == [run.run_id] and run.tags[TRIGGER_TAG] == "ui"
    tagged = _submit(instance, tmp_path, "wordllama", {TRIGGER_TAG: "automation"})
    assert tagged.tags[TRIGGER_TAG] == "automation"  # one that says already is left as it is


def test_a_typed_model_partition_fails_at_submission_and_is_removed(instance, tmp_path):
    instance.add_dynamic_partitions(model_partitions.name, ["wordllama", "wordllamaboundaries"])
    run = _submit(instance, tmp_path, "wordllamaboundaries")
    assert run.status == DagsterRunStatus.FAILURE
    [failure] = [e for e in instance.all_logs(run.run_id) if e.dagster_event
                 and e.dagster_event.event_type == DagsterEventType.RUN_FAILURE]
    message = failure.dagster_event.message
    assert "'wordllamaboundaries' names no entry of the model registry" in message and "registered: all-MiniLM-L6-v2, " in message
    assert not [e for e in instance.all_logs(run.run_id) if e.dagster_event and e.dagster_event.is_step_start]
    assert instance.get_dynamic_partitions(model_partitions.name) == ["wordllama"]


@pytest.mark.parametrize(("tags", "trigger"), [
    ({}, "ui"),
    ({"dagster/backfill": "abc"}, "ui"),
    ({"dagster/schedule_name": "nightly_evaluation"}, "nightly"),
    ({"dagster/schedule_name": "input_observation"}, "schedule"),
    ({"dagster/sensor_name": "rag_assets_automation"}, "automation"),
    ({"dagster/from_automation_condition": "true", "dagster/backfill": "b"}, "automation"),
    ({"dagster/sensor_name": "model_registry"}, "sensor"),
    ({TRIGGER_TAG: "cli"}, None),
])
def test_what_started_a_run_is_read_from_dagsters_tags(tags, trigger):
    assert trigger_of(tags) == trigger


def test_the_daemon_looks_for_new_backfills_every_few_seconds(instance):
    from rag_assets.dagster_compat import private
    from rag_assets.instance.run_coordinator import BACKFILL_POLL_SECONDS

    assert isinstance(instance.run_coordinator, RagRunCoordinator)  # what the daemon process loads
    assert private("DEFAULT_DAEMON_INTERVAL_SECONDS") == BACKFILL_POLL_SECONDS < 30
