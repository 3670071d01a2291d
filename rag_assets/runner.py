"""Materialise the whole graph, partition by partition, into one Dagster instance.

Dagster runs one partition key per run, and the graph has three partitionings (none, strategy,
model x strategy), so a whole evaluation is a sequence of runs in data-flow order. Every run is
recorded in the instance under ``$RAG_ASSETS_HOME/dagster``, which the UI reads too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from dagster import DagsterInstance

from rag_assets.definitions import COMMAND_TAG, MODELS_TAG, STRATEGIES_TAG, TRIGGER_TAG, build_definitions
from rag_assets.lib import paths
from rag_assets.lib.chunking import STRATEGIES
from rag_assets.lib.embedding import MODELS
from rag_assets.partitions import MODEL, STRATEGY, add_model_partitions, model_strategy_key
from rag_assets.resources import EmbeddingModels, RagSettings

DAGSTER_YAML = """\
# Written by rag_assets. DuckDB allows one writer per file: the pool of the asset that writes it
# gets one slot.
concurrency:
  pools:
    default_limit: 1
telemetry:
  enabled: false
"""
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def ensure_dagster_home(home: Path) -> Path:
    """The Dagster instance folder under the storage folder, with its dagster.yaml."""
    folder = paths.dagster_home(home)
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    return folder


def default_instance(home: Path) -> DagsterInstance:
    os.environ["DAGSTER_HOME"] = str(ensure_dagster_home(home))
    return DagsterInstance.get()


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


def _metadata(result, asset: str) -> dict:
    materializations = result.asset_materializations_for_node(asset)
    return {k: v.value for k, v in materializations[0].metadata.items()} if materializations else {}


def _checks(result) -> list[CheckOutcome]:
    return [CheckOutcome(c.asset_key.to_user_string(), c.check_name, c.passed, c.severity.value)
            for c in result.get_asset_check_evaluations()]


class Runner:
    """Runs the graph's named jobs into one instance, one partition key per run, each run tagged with
    the command, models and strategies it serves and ``rag_assets/trigger=cli``."""

    def __init__(self, settings: RagSettings, instance: DagsterInstance, models: EmbeddingModels | None = None,
                 progress: Callable[[str], None] = print, tags: dict[str, str] | None = None) -> None:
        self.settings, self.instance, self.progress = settings, instance, progress
        self.definitions = build_definitions(settings, models)
        self.tags = {TRIGGER_TAG: "cli", **(tags or {})}

    def run(self, job: str, partition_key=None, label: str = "", raise_on_error: bool = True):
        self.progress(f"running {job}{' ' + label if label else ''}")
        return self.definitions.resolve_job_def(job).execute_in_process(
            instance=self.instance, partition_key=partition_key, run_config=QUIET_RUN_CONFIG, tags=self.tags,
            raise_on_error=raise_on_error,
        )

    def observe_inputs(self, model_keys: Sequence[str]) -> None:
        """Register model partitions, then observe the corpus folder and the models' weights."""
        add_model_partitions(self.instance, model_keys)
        self.run("observe_inputs", label="(corpus_folder, embedding_model)")

    def model_partitions(self, model: str, strategies: Sequence[str]) -> list:
        return [self.run("model_partition", model_strategy_key(model, strategy), f"[{model} x {strategy}]")
                for strategy in strategies]


def _tags(command: str, model_keys: Sequence[str], strategies: Sequence[str]) -> dict[str, str]:
    return {COMMAND_TAG: command, MODELS_TAG: ",".join(model_keys), STRATEGIES_TAG: ",".join(strategies)}


def _check(model_keys: Sequence[str], strategies: Sequence[str]) -> None:
    for name, keys, known in ((MODEL, model_keys, MODELS), (STRATEGY, strategies, STRATEGIES)):
        unknown = [key for key in keys if key not in known]
        if unknown:
            raise ValueError(f"unknown {name} {', '.join(unknown)}; registered: {', '.join(known)}")


def materialize_all(
    settings: RagSettings,
    instance: DagsterInstance,
    models: EmbeddingModels | None = None,
    model_keys: Sequence[str] | None = None,
    strategies: Sequence[str] | None = None,
    progress: Callable[[str], None] = print,
) -> EvaluationOutcome:
    """Run corpus -> metrics for the given models and strategies (default: all registered)."""
    model_keys = list(model_keys or MODELS)
    strategies = list(strategies or STRATEGIES)
    _check(model_keys, strategies)
    runner = Runner(settings, instance, models, progress, _tags("evaluate", model_keys, strategies))
    runner.observe_inputs(model_keys)
    corpus = runner.run("evaluation_inputs")
    outcome = EvaluationOutcome(extraction=_metadata(corpus, "extracted_text"), eval_set=_metadata(corpus, "eval_set"),
                                checks=_checks(corpus))
    for strategy in strategies:
        outcome.checks += _checks(runner.run("chunking", strategy, f"[{strategy}]"))
    for model in model_keys:
        for result in runner.model_partitions(model, strategies):
            outcome.checks += _checks(result)
        outcome.partitions += [f"{model} x {strategy}" for strategy in strategies]
    outcome.checks += _checks(runner.run("evaluation_metrics"))
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
    for result in runner.model_partitions(model, strategies):
        outcome.checks += _checks(result)
    outcome.checks += _checks(runner.run("evaluation_metrics"))
    return outcome
