"""Materialise the whole graph, partition by partition, into one Dagster instance.

Dagster runs one partition key per run, and the graph has three partitionings (none, strategy,
model x strategy), so a whole evaluation is a sequence of runs in data-flow order. Every run is
recorded in the instance under ``$RAG_ASSETS_HOME/dagster``, which the UI reads too.

A model x strategy partition, and the metrics, are not run again when they are up to date: Dagster
reports every asset of the job fresh for that partition (its inputs' data versions, which are
content hashes, are those it was built from), it was built with the same settings (a fingerprint
kept as a run tag), and every check of that run passed. The inputs and the chunks are always
rebuilt (seconds), so any change to the corpus, the evaluation set or the chunking shows through
their data versions. ``rebuild=True`` runs everything.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from dagster import AssetRecordsFilter, DagsterEventType, DagsterInstance

from rag_assets.definitions import COMMAND_TAG, MODELS_TAG, STRATEGIES_TAG, TRIGGER_TAG, build_definitions
from rag_assets.instance_config import ensure_dagster_home
from rag_assets.lib.chunking import STRATEGIES
from rag_assets.lib.embedding import MODELS
from rag_assets.partitions import MODEL, STRATEGY, add_model_partitions, model_strategy_key
from rag_assets.resources import EXECUTION_ONLY, EmbeddingModels, RagSettings
from rag_assets.run_failures import (
    RunFailed,
    RunInterrupted,
    debugging,
    failure_paragraph,
    interrupted,
    warnings_of,
)

# Dagster's console log stays quiet: a failure is told in one paragraph (run_failures), warnings one line each
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
DEBUG_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
SETTINGS_TAG = "rag_assets/settings"  # fingerprint of the settings and model registry a run was built with
POOL = "duckdb_write"  # the pool of the asset that writes metrics.duckdb: one slot
SLOT_WAIT_ENV_VAR, DEFAULT_SLOT_WAIT = "RAG_ASSETS_SLOT_WAIT", 900  # seconds a run waits for a live writer's slot
PID_TAG, HOST_TAG = "rag_assets/pid", "rag_assets/host"  # the process that runs a `rag-assets` run, to tell a dead one


def default_instance(home: Path) -> DagsterInstance:
    """The instance under the storage folder. Opening it creates (or migrates) its SQLite storage,
    which two processes must not do at once (alembic fails), so that is done under a file lock."""
    folder = ensure_dagster_home(home)
    os.environ["DAGSTER_HOME"] = str(folder)
    with open(folder / ".instance.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        instance = DagsterInstance.get()
        instance.get_runs(limit=1)  # the run, event log and schedule storages are created now, not later
        instance.event_log_storage.get_concurrency_keys()
        if instance.schedule_storage:
            instance.schedule_storage.all_instigator_state()
    return instance


@dataclass
class CheckOutcome:
    asset: str
    name: str
    passed: bool
    severity: str  # "ERROR" or "WARN"

    @property
    def verdict(self) -> str:
        return "passed" if self.passed else "warn" if self.severity == "WARN" else "FAILED"


@dataclass
class EvaluationOutcome:
    """What a whole evaluation materialised: the inputs' summaries (from the assets' own metadata)
    and every check result, for the command line to print."""

    extraction: dict = field(default_factory=dict)
    eval_set: dict = field(default_factory=dict)
    checks: list[CheckOutcome] = field(default_factory=list)
    partitions: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)  # jobs not run again: nothing they read had changed


def _metadata(result, asset: str) -> dict:
    materializations = result.asset_materializations_for_node(asset)
    return {k: v.value for k, v in materializations[0].metadata.items()} if materializations else {}


def _checks(result) -> list[CheckOutcome]:
    return [CheckOutcome(c.asset_key.to_user_string(), c.check_name, c.passed, c.severity.value)
            for c in result.get_asset_check_evaluations()]


class Runner:
    """Runs the graph's named jobs into one instance, one partition key per run, each run tagged with
    the command, models and strategies it serves, ``rag_assets/trigger=cli`` and the settings'
    fingerprint; with ``rebuild=False``, an up-to-date partition is reported, not run."""

    def __init__(self, settings: RagSettings, instance: DagsterInstance, models: EmbeddingModels | None = None,
                 progress: Callable[[str], None] = print, tags: dict[str, str] | None = None,
                 rebuild: bool = True) -> None:
        self.settings, self.instance, self.progress, self.rebuild = settings, instance, progress, rebuild
        self.definitions = build_definitions(settings, models)
        self.fingerprint = settings_fingerprint(settings, models)
        self.tags = {TRIGGER_TAG: "cli", SETTINGS_TAG: self.fingerprint, PID_TAG: str(os.getpid()),
                     HOST_TAG: socket.gethostname(), **(tags or {})}
        self.skipped: list[str] = []
        for message in release_slots_of_dead_runs(instance):
            progress(message)

    def wait_for_writers_slot(self, job: str) -> None:
        """Before a job that writes DuckDB: wait while a live run holds the writers' slot, at most
        ``RAG_ASSETS_SLOT_WAIT`` seconds (default 900), saying which run holds it; then SlotBusy."""
        if POOL not in {pool for node in self.definitions.resolve_job_def(job).graph.node_defs
                        for pool in [getattr(node, "pool", None)] if pool}:
            return
        limit = float(os.environ.get(SLOT_WAIT_ENV_VAR, DEFAULT_SLOT_WAIT))
        deadline, told = time.monotonic() + limit, False
        while (holder := slot_holder(self.instance, POOL)) is not None:
            if not told:
                self.progress(f"waiting (at most {limit:.0f} s, {SLOT_WAIT_ENV_VAR}) for {holder}, which holds the "
                              "DuckDB writers' slot")
                told = True
            if time.monotonic() >= deadline:
                raise SlotBusy(f"the DuckDB writers' slot is still held after {limit:.0f} s by {holder}. Wait for it "
                               f"to finish, or stop that process (kill its pid); the next rag-assets run releases the "
                               f"slot of a run whose process is gone")
            time.sleep(1.0)
            for message in release_slots_of_dead_runs(self.instance):
                self.progress(message)

    def run(self, job: str, partition_key=None, label: str = "", raise_on_error: bool = True):
        """Run a job for one partition key. A failure raises RunFailed, whose message is one paragraph
        (the step, the cause, what a failed blocking check found); the assets' own warnings are passed
        to ``progress``. With RAG_ASSETS_DEBUG set, Dagster's log and the original exception instead."""
        what = f"{job}{' ' + label if label else ''}"
        self.wait_for_writers_slot(job)
        self.progress(f"running {what}")
        debug = debugging()
        result = self.definitions.resolve_job_def(job).execute_in_process(
            instance=self.instance, partition_key=partition_key, tags=self.tags,
            run_config=DEBUG_RUN_CONFIG if debug else QUIET_RUN_CONFIG, raise_on_error=raise_on_error and debug,
        )
        if not debug:
            for message in warnings_of(self.instance, result.run_id):
                self.progress(f"warning: {message}")
        if raise_on_error and not result.success:
            failure = RunInterrupted if interrupted(result) else RunFailed
            raise failure(failure_paragraph(result, what), result.run_id)
        return result

    def checks_unless_current(self, job: str, partition_key=None, label: str = "") -> list[CheckOutcome]:
        """The checks of the job's run for this partition: of a new run, or, when the partition is up
        to date (and ``rebuild`` is off), of the run that built it."""
        kept = None if self.rebuild else self.current_checks(job, partition_key)
        if kept is None:
            return _checks(self.run(job, partition_key, label))
        self.progress(f"up to date: {job}{' ' + label if label else ''} (nothing it reads has changed)")
        self.skipped.append(f"{job}{' ' + label if label else ''}")
        return kept

    def current_checks(self, job: str, partition_key=None) -> list[CheckOutcome] | None:
        """The check outcomes of the runs that built the job's assets for ``partition_key``, if every
        asset is fresh by Dagster's own status, was built with these settings, and passed its checks;
        else None."""
        from dagster._core.definitions.data_version import StaleStatus

        job_def = self.definitions.resolve_job_def(job)
        keys = sorted(job_def.asset_layer.selected_asset_keys, key=lambda k: k.to_user_string())
        resolver = stale_status_resolver(self.instance, self.definitions.resolve_asset_graph())
        runs = set()
        for key in keys:
            if resolver.get_status(key, str(partition_key) if partition_key is not None else None) != StaleStatus.FRESH:
                return None
            records = self.instance.fetch_materializations(
                AssetRecordsFilter(asset_key=key, asset_partitions=[str(partition_key)] if partition_key else None),
                limit=1).records
            if not records:
                return None
            runs.add(records[0].run_id)
        outcomes = []
        for run_id in sorted(runs):
            run = self.instance.get_run_by_id(run_id)
            if run is None or run.tags.get(SETTINGS_TAG) != self.fingerprint:
                return None
            for entry in self.instance.all_logs(run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION):
                evaluation = entry.dagster_event.event_specific_data
                if evaluation.asset_key not in keys:
                    continue
                outcome = CheckOutcome(evaluation.asset_key.to_user_string(), evaluation.check_name,
                                       evaluation.passed, evaluation.severity.value)
                if outcome.verdict == "FAILED":
                    return None
                outcomes.append(outcome)
        return outcomes

    def observe_inputs(self, model_keys: Sequence[str]) -> None:
        """Register model partitions, then observe the corpus folder and the models' weights."""
        add_model_partitions(self.instance, model_keys)
        self.run("observe_inputs", label="(corpus_folder, embedding_model)")

    def model_partitions(self, model: str, strategies: Sequence[str]) -> list[CheckOutcome]:
        return [outcome for strategy in strategies for outcome in self.checks_unless_current(
            "model_partition", model_strategy_key(model, strategy), f"[{model} x {strategy}]")]


def release_slots_of_dead_runs(instance: DagsterInstance) -> list[str]:
    """Free the concurrency slots (the DuckDB writers' pool above all) held by runs that can no longer
    release them, and record such runs as failed: a `rag-assets` process of this machine that is gone
    (killed, or stopped by a full disk), or a run that already ended. Runs of other processes (the
    daemon's) are left to Dagster's run monitoring. Returns what was done, one line each."""
    storage = instance.event_log_storage
    released = []
    for pool in storage.get_concurrency_keys():
        info = storage.get_concurrency_info(pool)
        for run_id in sorted({s.run_id for s in info.claimed_slots} | {s.run_id for s in info.pending_steps}):
            run = instance.get_run_by_id(run_id)
            if run is not None and not run.is_finished and _process_alive(run.tags):
                continue
            if run is not None and not run.is_finished:
                instance.report_run_failed(run, f"its process {run.tags.get(PID_TAG)} is gone (killed or stopped); "
                                                f"marked failed by rag-assets, which released its {pool} slot")
            storage.free_concurrency_slots_for_run(run_id)
            what = "the DuckDB writers' slot" if pool == "duckdb_write" else f"the {pool} slot"
            released.append(f"released {what} held by run {run_id}, whose process is gone")
    return released


class SlotBusy(RuntimeError):
    """A live run has held the DuckDB writers' slot longer than this run would wait."""


def slot_holder(instance: DagsterInstance, pool: str) -> str | None:
    """Who holds the slots of ``pool`` now (run id, job, command, process and host), or None."""
    storage = instance.event_log_storage
    if pool not in storage.get_concurrency_keys():
        return None
    info = storage.get_concurrency_info(pool)
    claimed = info.claimed_slots
    if not claimed or len(claimed) < max(1, info.limit or info.slot_count or 1):
        return None
    run = instance.get_run_by_id(claimed[0].run_id)
    if run is None:
        return f"run {claimed[0].run_id}"
    tags = run.tags
    process = f"process {tags[PID_TAG]} on {tags.get(HOST_TAG, '?')}" if PID_TAG in tags else "the Dagster daemon or UI"
    command = tags.get(COMMAND_TAG, tags.get(TRIGGER_TAG, "a run"))
    return f"run {run.run_id} ({run.job_name}, {command}, {process})"


def _process_alive(tags: dict) -> bool:
    """Whether the run's process may still be running: True unless it is a `rag-assets` process of
    this machine that no longer exists (or whose pid now names another program)."""
    if PID_TAG not in tags or tags.get(HOST_TAG) != socket.gethostname():
        return True
    try:
        command = Path(f"/proc/{int(tags[PID_TAG])}/cmdline").read_bytes()
    except (OSError, ValueError):
        return False
    return b"rag" in command


def settings_fingerprint(settings: RagSettings, models: EmbeddingModels | None = None) -> str:
    """16 hex digits over every setting and every registry entry: what a run was built with (less the
    settings that choose only where or in what steps it runs, ``EXECUTION_ONLY``)."""
    registry = {key: repr(spec) for key, spec in sorted(MODELS.items())}
    if models is not None:
        registry["resource"] = repr(sorted(models.model_dump().items()))
    payload = json.dumps({"settings": settings.model_dump(exclude=set(EXECUTION_ONLY)), "models": registry}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def stale_status_resolver(instance: DagsterInstance, graph):
    """Dagster's own stale status of ``graph``'s assets, per partition, as the UI computes it."""
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._time import get_current_datetime

    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=graph)
    return CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view)


def _tags(command: str, model_keys: Sequence[str], strategies: Sequence[str]) -> dict[str, str]:
    return {COMMAND_TAG: command, MODELS_TAG: ",".join(model_keys), STRATEGIES_TAG: ",".join(strategies)}


class UsageError(ValueError):
    """The models or strategies asked for cannot be run as given (before anything runs)."""


def _check(model_keys: Sequence[str], strategies: Sequence[str]) -> None:
    for name, keys, known in ((MODEL, model_keys, MODELS), (STRATEGY, strategies, STRATEGIES)):
        unknown = [key for key in keys if key not in known]
        if unknown:
            raise UsageError(f"unknown {name} {', '.join(unknown)}; registered: {', '.join(known)}")
        twice = sorted({key for key in keys if list(keys).count(key) > 1})
        if twice:
            raise UsageError(f"{name} {', '.join(twice)} named more than once; name each once")


def materialize_all(
    settings: RagSettings,
    instance: DagsterInstance,
    models: EmbeddingModels | None = None,
    model_keys: Sequence[str] | None = None,
    strategies: Sequence[str] | None = None,
    progress: Callable[[str], None] = print,
    rebuild: bool = False,
) -> EvaluationOutcome:
    """Run corpus -> metrics for the given models and strategies (default: all registered); model x
    strategy partitions and the metrics only where they are not up to date, unless ``rebuild``."""
    model_keys = list(model_keys or MODELS)
    strategies = list(strategies or STRATEGIES)
    _check(model_keys, strategies)
    runner = Runner(settings, instance, models, progress, _tags("evaluate", model_keys, strategies), rebuild)
    runner.observe_inputs(model_keys)
    corpus = runner.run("evaluation_inputs")
    outcome = EvaluationOutcome(extraction=_metadata(corpus, "extracted_text"), eval_set=_metadata(corpus, "eval_set"),
                                checks=_checks(corpus))
    for strategy in strategies:
        outcome.checks += _checks(runner.run("chunking", strategy, f"[{strategy}]"))
    for model in model_keys:
        outcome.checks += runner.model_partitions(model, strategies)
        outcome.partitions += [f"{model} x {strategy}" for strategy in strategies]
    outcome.checks += runner.checks_unless_current("evaluation_metrics")
    outcome.up_to_date = runner.skipped
    return outcome


def backfill_model(
    settings: RagSettings,
    instance: DagsterInstance,
    model: str,
    models: EmbeddingModels | None = None,
    strategies: Sequence[str] | None = None,
    progress: Callable[[str], None] = print,
) -> EvaluationOutcome:
    """Bring one model up to date after its weights changed (or it was just added): observe its
    weights, rebuild its embeddings and retrieval partitions for every strategy, then the metrics.

    Unchanged chunk texts are not re-embedded if this weights revision has embedded them before.
    """
    strategies = list(strategies or STRATEGIES)
    _check([model], strategies)
    runner = Runner(settings, instance, models, progress, _tags("backfill", [model], strategies))
    runner.observe_inputs([model])
    outcome = EvaluationOutcome(partitions=[f"{model} x {strategy}" for strategy in strategies])
    outcome.checks += runner.model_partitions(model, strategies)
    outcome.checks += _checks(runner.run("evaluation_metrics"))
    return outcome
