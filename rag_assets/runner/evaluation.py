"""Materialise the whole graph, partition by partition, into one Dagster instance.

Dagster runs one partition key per run, and the graph has three partitionings (none, strategy,
model x strategy), so a whole evaluation is a sequence of runs in data-flow order. Every run is
recorded in the instance under the storage folder (``<home>/dagster``), which the UI reads too.

A model x strategy partition, and the metrics, are not run again when they are up to date
(``freshness``). The inputs and the chunks are always rebuilt (seconds), so any change to the
corpus, the evaluation set or the chunking shows through their data versions. ``rebuild=True``
runs everything.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Callable, Mapping, Sequence

from dagster import AssetKey, DagsterInstance, DagsterRunStatus

from rag_assets.definitions import build_definitions
from rag_assets.lib.embed.models import registry
from rag_assets.lib.evaluate.results_store import newest_evaluation_run, withdraw_failed, withdraw_run
from rag_assets.lib.ingest.chunking import STRATEGIES
from rag_assets.lib.ingest.strategies import StrategyFileError
from rag_assets.lib.retrieve.external import registry as external_registry
from rag_assets.lib.store.database import damage_of
from rag_assets.lib.store.paths import duckdb_path, stored_database
from rag_assets.partitions import (
    EXTERNAL,
    MODEL,
    STRATEGY,
    add_model_partitions,
    add_strategy_partitions,
    model_strategy_key,
    registered_strategies,
)
from rag_assets.resources import EmbeddingModels, RagSettings
from rag_assets.runner.failures import (
    InterruptedAfterRun,
    RunFailed,
    RunInterrupted,
    UsageError,
    debugging,
    failure_paragraph,
    interrupted,
    warnings_of,
)
from rag_assets.runner.freshness import (
    CheckOutcome,
    EvaluationOutcome,
    checks_of,
    current_checks,
    metadata_of,
    settings_fingerprint,
)
from rag_assets.runner.interrupts import pending as interrupt_pending
from rag_assets.runner.writers_slot import (
    fail_unfinished_runs_of,
    release_slots_of_dead_runs,
    wait_for_writers_slot,
)
from rag_assets.settings import current
from rag_assets.stages import EVALUATION, STAGES, job_of
from rag_assets.tags import (
    COMMAND_TAG,
    DUCKDB_WRITE_POOL,
    HOST_TAG,
    MODELS_TAG,
    PID_TAG,
    SETTINGS_TAG,
    STRATEGIES_TAG,
    TRIGGER_TAG,
)

# Dagster's console log stays quiet: a failure is told in one paragraph (failures), warnings one line each
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
DEBUG_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


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
        self.external_changed = False  # an external retriever's partition was evaluated again by this command
        self.failed_alone: list = []  # the partitions whose run failed alone (an external retriever's)
        home = Path(settings.home)
        self.withdraw = lambda run_id: withdraw_run(duckdb_path(home), home, run_id)
        for message in release_slots_of_dead_runs(instance, self.withdraw):
            progress(message)
        for message in withdraw_failed(duckdb_path(home), home, lambda run_id: run_failed(instance, run_id)):
            progress(message)

    def writes_duckdb(self, job: str) -> bool:
        """Whether a step of the job runs in the DuckDB writers' pool."""
        return DUCKDB_WRITE_POOL in {getattr(node, "pool", None)
                                     for node in self.definitions.resolve_job_def(job).graph.node_defs}

    def run(self, job: str, partition_key=None, label: str = "", raise_on_error: bool = True):
        """Run a job for one partition key. A failure raises RunFailed, whose message is one paragraph
        (the step, the cause, what a failed blocking check found); the assets' own warnings are passed
        to ``progress``. With the debug setting (RAG_ASSETS_DEBUG), Dagster's log and the original
        exception instead."""
        what = f"{job}{' ' + label if label else ''}"
        if self.writes_duckdb(job):
            wait_for_writers_slot(self.instance, current().instance.slot_wait, self.progress, self.withdraw)
        self.progress(f"running {what}")
        debug = debugging()
        try:
            result = self.definitions.resolve_job_def(job).execute_in_process(
                instance=self.instance, partition_key=partition_key, tags=self.tags,
                run_config=DEBUG_RUN_CONFIG if debug else QUIET_RUN_CONFIG, raise_on_error=raise_on_error and debug,
            )
        except BaseException:  # stopped before Dagster could end the run (Ctrl-C as it created it, say)
            fail_unfinished_runs_of(self.instance, os.getpid(), f"{what} was stopped before it ended (interrupted "
                                                                 "or failed as it started)")
            raise
        if not debug:
            for message in warnings_of(self.instance, result.run_id):
                self.progress(f"warning: {message}")
        if interrupt_pending():  # also one Dagster took while it wrote the run's last events, and forgot
            raise InterruptedAfterRun(f"{what} {'finished' if result.success else 'was stopped'} (run "
                                 f"{result.run_id[:8]}, recorded as {'a success' if result.success else 'failed'})"
                                 "; nothing after it ran", result.run_id)
        if raise_on_error and not result.success:
            failure = RunInterrupted if interrupted(result) else RunFailed
            raise failure(failure_paragraph(result, what), result.run_id)
        return result

    def checks_unless_current(self, job: str, partition_key=None, label: str = "",
                              output_whole: bool = True, alone: bool = False) -> list[CheckOutcome]:
        """The checks of the job's run for this partition: of a new run, or, when the partition is up
        to date (and ``rebuild`` is off, and its output is whole on disk), of the run that built it. With
        ``alone``, a run that fails (not one that is stopped) is said in one warning line, its key kept in
        ``failed_alone``, and the evaluation goes on."""
        kept = None if self.rebuild or not output_whole else current_checks(
            self.definitions, self.instance, self.fingerprint, job, partition_key)
        if kept is None:
            result = self.run(job, partition_key, label, raise_on_error=not alone)
            if alone and not result.success:
                if interrupted(result):
                    raise RunInterrupted(failure_paragraph(result, f"{job} {label}".strip()), result.run_id)
                self.progress(f"warning: {failure_paragraph(result, f'{job} {label}'.strip())}")
                self.failed_alone.append(partition_key)
                return []
            return checks_of(result)
        self.progress(f"up to date: {job}{' ' + label if label else ''} (nothing it reads has changed)")
        self.skipped.append(f"{job}{' ' + label if label else ''}")
        return kept

    def publish(self) -> None:
        """Every evaluation run the team's database (``publish.url``) does not hold yet, written there; a
        failure is said in one line and never fails the evaluation (the next command retries it)."""
        if not self.settings.publish.url:
            return
        result = self.run("publish_evaluation", raise_on_error=False)
        if result.success:
            self.progress(str(metadata_of(result, "published_evaluation").get("published", "published")))
        else:
            self.progress(f"warning: {failure_paragraph(result, 'publish_evaluation')}")

    def observe_inputs(self, model_keys: Sequence[str]) -> None:
        """Register model and strategy partitions, then observe the corpus folder, the models' weights and the
        strategies' definitions."""
        add_model_partitions(self.instance, model_keys)
        add_strategy_partitions(self.instance, list(registered_strategies(self.settings)))
        self.run("observe_inputs", label="(corpus_folder, embedding_model)")
        self.run("observe_strategies", label="(chunking_strategy)")

    def external_partitions(self) -> list[str]:
        """Observe every registered external retriever (its index version), then ask each one the evaluation
        set's queries unless its partition is up to date; the keys evaluated."""
        keys = list(external_registry(self.settings.retrievers_file))
        if not keys:
            return []
        self.run("observe_external", label="(external_retriever)")
        skipped = len(self.skipped)
        for key in keys:  # one that fails fails alone: the metrics leave it out, by its partition's status
            self.checks_unless_current(job_of(EXTERNAL), key, f"[external {key}]", alone=True)
        # Dagster's status does not carry a dynamic partition's new version (or a failure) to the unpartitioned
        # metrics
        self.external_changed = len(self.skipped) - skipped < len(keys)
        return [key for key in keys if key not in self.failed_alone]

    def chunking_partition(self, job: str, strategy: str) -> list[CheckOutcome]:
        """Chunk one strategy; one that fails (a team's splitter that raises, or a library not installed) is one
        warning line, its name kept in ``failed_alone``, and the other strategies go on."""
        result = self.run(job, strategy, f"[{strategy}]", raise_on_error=False)
        if not result.success:
            if interrupted(result) or debugging():
                raise (RunInterrupted if interrupted(result) else RunFailed)(
                    failure_paragraph(result, f"{job} [{strategy}]"), result.run_id)
            self.progress(f"warning: {failure_paragraph(result, f'{job} [{strategy}]')}; the other strategies go on")
            self.failed_alone.append(strategy)
            return []
        return checks_of(result)

    def model_partitions(self, model: str, strategies: Sequence[str]) -> list[CheckOutcome]:
        return [outcome for strategy in strategies for outcome in self.checks_unless_current(
            job_of(MODEL), model_strategy_key(model, strategy), f"[{model} x {strategy}]")]


def run_failed(instance: DagsterInstance, run_id: str) -> bool:
    """Whether Dagster recorded the run as ended without success (failed or canceled)."""
    run = instance.get_run_by_id(run_id)
    return run is not None and run.status in (DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED)


def metrics_whole(settings: RagSettings, instance: DagsterInstance | None = None) -> bool:
    """Whether ``metrics.duckdb`` is there, readable and (with ``instance``) holds, as its newest evaluation, the
    one of Dagster's latest materialisation of ``retrieval_metrics``: a missing or damaged file, or one whose
    newest evaluation was withdrawn (a run that did not end in success), is written again even when every input
    is unchanged."""
    database = stored_database(Path(settings.home))
    if not database.exists() or damage_of(database) is not None:
        return False
    if instance is None:
        return True
    latest = instance.get_latest_materialization_event(AssetKey("retrieval_metrics"))
    return latest is not None and newest_evaluation_run(database) == latest.run_id


def _tags(command: str, model_keys: Sequence[str], strategies: Sequence[str]) -> dict[str, str]:
    return {COMMAND_TAG: command, MODELS_TAG: ",".join(model_keys), STRATEGIES_TAG: ",".join(strategies)}


def check_names(model_keys: Sequence[str], strategies: Sequence[str], models_file: str,
                known_strategies: Mapping[str, object] = STRATEGIES) -> None:
    """UsageError for a model or strategy that is not registered (the models of ``models_file`` and the strategies
    of the strategies file included), or named twice (before anything opens)."""
    for name, keys, known in ((MODEL, model_keys, registry(models_file)), (STRATEGY, strategies, known_strategies)):
        unknown = [key for key in keys if key not in known]
        if unknown:
            raise UsageError(f"unknown {name} {', '.join(unknown)}; registered: {', '.join(known)}")
        twice = sorted({key for key in keys if list(keys).count(key) > 1})
        if twice:
            raise UsageError(f"{name} {', '.join(twice)} named more than once; name each once")


def strategies_of(settings: RagSettings, strategies: Sequence[str] | None) -> tuple[list[str], dict]:
    """The strategies a command runs (default: every registered one) and the registry; a strategies file that
    cannot be used is a UsageError in one line, before anything runs."""
    try:
        known = registered_strategies(settings)
    except StrategyFileError as error:
        raise UsageError(str(error)) from None
    return list(strategies or known), known


def check_retrievers_file(retrievers_file: str) -> None:
    """UsageError for a retrievers file that cannot be read or holds a bad entry, before anything runs (not
    after the corpus is observed and chunked)."""
    from rag_assets.lib.retrieve.external import ExternalRetrieverError

    try:
        external_registry(retrievers_file)
    except ExternalRetrieverError as error:
        raise UsageError(str(error)) from None


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
    model_keys = list(model_keys or registry(settings.models_file))
    strategies, known = strategies_of(settings, strategies)
    check_names(model_keys, strategies, settings.models_file, known)
    check_retrievers_file(settings.retrievers_file)
    runner = Runner(settings, instance, models, progress, _tags("evaluate", model_keys, strategies), rebuild)
    runner.observe_inputs(model_keys)
    outcome = EvaluationOutcome()
    for stage in STAGES:  # data-flow order (stages.py), each stage by its partitioning
        if stage is EVALUATION:
            outcome.checks += runner.checks_unless_current(stage.job, output_whole=metrics_whole(settings, instance)
                                                           and not runner.external_changed)
        elif stage.partitioning is None:
            inputs = runner.run(stage.job)
            outcome.extraction, outcome.eval_set = metadata_of(inputs, "extracted_text"), metadata_of(inputs, "eval_set")
            outcome.checks += checks_of(inputs)
        elif stage.partitioning == STRATEGY:
            for strategy in strategies:  # a strategy that fails (a team's splitter) fails alone, in one line
                outcome.checks += runner.chunking_partition(stage.job, strategy)
            strategies = [strategy for strategy in strategies if strategy not in runner.failed_alone]
        elif stage.partitioning == MODEL:
            for model in model_keys:
                outcome.checks += runner.model_partitions(model, strategies)
                outcome.partitions += [f"{model} x {strategy}" for strategy in strategies]
        elif stage.partitioning == EXTERNAL:
            outcome.partitions += [f"external {key}" for key in runner.external_partitions()]
        else:
            raise ValueError(f"stage {stage.job}: no way to run a partitioning {stage.partitioning!r}")
    runner.publish()
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
    strategies, known = strategies_of(settings, strategies)
    check_names([model], strategies, settings.models_file, known)
    check_retrievers_file(settings.retrievers_file)
    runner = Runner(settings, instance, models, progress, _tags("backfill", [model], strategies))
    runner.observe_inputs([model])
    outcome = EvaluationOutcome(partitions=[f"{model} x {strategy}" for strategy in strategies])
    outcome.checks += runner.model_partitions(model, strategies)
    outcome.checks += checks_of(runner.run(EVALUATION.job))
    runner.publish()
    return outcome
