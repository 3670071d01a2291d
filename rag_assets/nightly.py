"""The nightly evaluation, in two parts, so that the history gets its point on the night something changed.

1. The ``nightly_evaluation`` schedule (the ``schedule.cron`` setting) observes the corpus folder and
   every model's weights (job ``nightly_observation``, tagged ``nightly``; the external retrievers are
   observed every 15 minutes by ``external_observation``).
2. The ``nightly_completion`` sensor then brings what those observations made stale up to date, and only
   then appends the evaluation run (job ``evaluation_metrics``, tagged ``nightly``). It acts once the
   observation has ended and no run is queued or in progress (the automation's rebuilds included): it
   first gives the automation ``AUTOMATION_GRACE_SECONDS`` to start its rebuilds, then requests the
   rebuilds of the earliest stale stage itself (inputs, then chunks, then each model x strategy and
   external retriever partition), as many rounds as staleness travels down the graph. It never waits
   longer than ``MAX_WAIT_SECONDS`` in all, or ``MAX_REBUILD_ROUNDS`` rounds (a rebuild that keeps
   failing): then it evaluates what there is, and the metrics' stamp check names what is out of date.

Stale means what Dagster's own status says (the UI's "Unsynced"): a partition whose inputs' data versions
changed since it was built, or whose code version changed. The sensor's cursor remembers the night it
completed, so each scheduled observation gets exactly one evaluation run.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

from dagster import AssetKey, DagsterInstance, DagsterRunStatus, RunRequest, RunsFilter, SkipReason

from rag_assets.dagster_compat import is_fresh, stale_status_resolver
from rag_assets.partitions import MODEL, model_partitions, model_strategy_key
from rag_assets.stages import EVALUATION, REBUILT
from rag_assets.tags import NIGHTLY_TICK_TAG, TRIGGER_TAG

AUTOMATION_GRACE_SECONDS = 90.0  # three ticks of the automation sensor after the observation ended
MAX_WAIT_SECONDS = 3 * 3600.0
MAX_REBUILD_ROUNDS = 6  # inputs, chunks, model x strategy: three stages, each allowed one retry
OBSERVATION_JOB = "nightly_observation"
EVALUATION_JOB = EVALUATION.job
_SCHEDULED_TIME_TAG = "dagster/scheduled_execution_time"
UNFINISHED = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING,
              DagsterRunStatus.STARTED, DagsterRunStatus.CANCELING]
FINISHED = (DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED)



@dataclass
class Night:
    """The sensor's cursor: the night being completed (its observation run's scheduled time) and how far."""

    tick: str = ""
    done: bool = False
    first_seen: float = 0.0  # when the sensor first saw this night's observation ended
    rounds: int = 0  # rebuild rounds requested for this night

    @classmethod
    def of(cls, cursor: str | None) -> Night:
        """The night a cursor holds: its JSON after ``CURSOR_MARK`` (a cursor written before the summary was
        added is all JSON)."""
        if not cursor:
            return cls()
        return cls(**json.loads(cursor.rpartition(CURSOR_MARK)[2]))

    def summary(self) -> str:
        """What the night is at, in words: the first thing the sensor's page shows of its cursor."""
        if not self.tick:
            return "no night started yet: waiting for the nightly_evaluation schedule's observation"
        if self.done:
            return f"night of {self.tick}: evaluated after {self.rounds} rebuild round(s)"
        return f"night of {self.tick}: in progress, {self.rounds} rebuild round(s) requested so far"

    def dumps(self) -> str:
        return self.summary() + CURSOR_MARK + json.dumps(asdict(self))


CURSOR_MARK = " | state: "  # between the cursor's words and its JSON


def stale_partitions(instance: DagsterInstance, asset_graph) -> tuple[str, list]:
    """The earliest stage with a stale materialised partition: (its job, its partition keys; None for
    the unpartitioned stage), or ("", []) when everything materialised is up to date."""
    resolver = stale_status_resolver(instance, asset_graph)
    models = set(instance.get_dynamic_partitions(model_partitions.name))
    for job, assets, dimension in ((stage.job, stage.assets, stage.partitioning) for stage in REBUILT):
        stale = []
        for asset in assets:
            key = AssetKey(asset)
            if not asset_graph.has(key):
                continue
            if dimension is None:
                if instance.get_latest_materialization_event(key) and not is_fresh(resolver.get_status(key, None)):
                    stale.append(None)
                continue
            for partition in sorted(instance.get_materialized_partitions(key)):
                if dimension == MODEL:
                    model, _, strategy = partition.partition("|")
                    if model not in models:
                        continue  # a partition of a model no longer registered: nothing to rebuild
                    partition = str(model_strategy_key(model, strategy))
                try:
                    fresh = is_fresh(resolver.get_status(key, partition))
                except Exception:  # noqa: BLE001 - a partition its definition no longer has: nothing to rebuild
                    continue
                if not fresh and partition not in stale:
                    stale.append(partition)
        if stale:
            return job, sorted(set(stale), key=str) if stale != [None] else [None]
    return "", []


def complete_the_night(instance: DagsterInstance, asset_graph, cursor: str | None, automation_on: bool = True,
                       now: float | None = None):
    """What the ``nightly_completion`` sensor does on one tick: (run requests or a skip reason, new cursor).
    With the automation off (``schedule.automation=stopped``) it rebuilds at once, giving it no turn."""
    now = time.time() if now is None else now
    grace = AUTOMATION_GRACE_SECONDS if automation_on else 0.0
    night = Night.of(cursor)
    [observation] = instance.get_runs(filters=RunsFilter(job_name=OBSERVATION_JOB), limit=1) or [None]
    if observation is None:
        return SkipReason("no nightly observation has run yet"), night.dumps()
    tick = observation.tags.get(_SCHEDULED_TIME_TAG, observation.run_id)
    if night.tick != tick:
        night = Night(tick=tick)
    if night.done:
        return SkipReason(f"the night of {tick} is evaluated"), night.dumps()
    if observation.status not in FINISHED:
        return SkipReason(f"the nightly observation {observation.run_id[:8]} is {observation.status.value}"), night.dumps()
    night.first_seen = night.first_seen or now
    waited = now - night.first_seen
    tags = {TRIGGER_TAG: "nightly", NIGHTLY_TICK_TAG: tick}
    busy = [run for run in instance.get_runs(filters=RunsFilter(statuses=UNFINISHED)) if run.run_id != observation.run_id]
    if busy and waited < MAX_WAIT_SECONDS:
        return SkipReason(f"waiting for {len(busy)} run(s) in progress ({', '.join(r.run_id[:8] for r in busy[:5])}) "
                          f"before it evaluates"), night.dumps()
    job, stale = stale_partitions(instance, asset_graph) if waited < MAX_WAIT_SECONDS else ("", [])
    if stale and night.rounds < MAX_REBUILD_ROUNDS:
        if waited < grace and night.rounds == 0:
            return SkipReason(f"{len(stale)} stale partition(s) of {job}: the automation may rebuild them first"), \
                night.dumps()
        night.rounds += 1
        return [RunRequest(job_name=job, partition_key=partition, tags=tags,
                           run_key=f"nightly {tick} round {night.rounds} {job} {partition}") for partition in stale], \
            night.dumps()
    night.done = True
    return [RunRequest(job_name=EVALUATION_JOB, tags=tags, run_key=f"nightly {tick} evaluation")], night.dumps()
