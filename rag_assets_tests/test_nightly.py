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
