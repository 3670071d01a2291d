"""Materialise the whole graph, partition by partition, into one Dagster instance.

Dagster runs one partition key per run, and the graph has three partitionings (none, strategy,
model x strategy), so a whole evaluation is a sequence of runs in data-flow order. Every run is
recorded in the instance under ``$RAG_ASSETS_HOME/dagster``, which the UI reads too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from dagster import DagsterInstance, MultiPartitionKey, materialize

from rag_assets.definitions import ASSET_CHECKS, ASSETS, build_definitions
from rag_assets.lib import paths
from rag_assets.lib.chunking import STRATEGIES
from rag_assets.lib.embedding import MODELS
from rag_assets.partitions import model_partitions
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


class Runner:
    """Materialises parts of the graph into one instance, one partition key per run."""

    def __init__(self, settings: RagSettings, instance: DagsterInstance, models: EmbeddingModels | None = None,
                 progress: Callable[[str], None] = print) -> None:
        self.settings, self.instance, self.progress = settings, instance, progress
        self.definitions = build_definitions(settings, models)
        self.resources = dict(self.definitions.resources)

    def run(self, selection: list[str], partition_key=None, label: str = "", raise_on_error: bool = True):
        self.progress(f"materialising {', '.join(selection)}{' ' + label if label else ''}")
        return materialize(
            [*ASSETS, *ASSET_CHECKS], selection=selection, partition_key=partition_key, instance=self.instance,
            resources=self.resources, run_config=QUIET_RUN_CONFIG, raise_on_error=raise_on_error,
        )

    def observe_inputs(self, model_keys: Sequence[str]) -> None:
        """Register model partitions, then observe the corpus folder and the models' weights."""
        existing = set(self.instance.get_dynamic_partitions(model_partitions.name))
        new = [key for key in model_keys if key not in existing]
        if new:
            self.instance.add_dynamic_partitions(model_partitions.name, new)
        self.progress("observing corpus_folder and embedding_model")
        observe = self.definitions.resolve_job_def("observe_inputs")
        observe.execute_in_process(instance=self.instance, run_config=QUIET_RUN_CONFIG)

    def model_partitions(self, model: str, strategies: Sequence[str]) -> list:
        return [
            self.run(["embeddings", "retrieval_runs"], MultiPartitionKey({"model": model, "strategy": strategy}),
                     f"[{model} x {strategy}]")
            for strategy in strategies
        ]


def _check(model_keys: Sequence[str], strategies: Sequence[str]) -> None:
    for name, keys, known in (("model", model_keys, MODELS), ("strategy", strategies, STRATEGIES)):
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
) -> None:
    """Run corpus -> metrics for the given models and strategies (default: all registered)."""
    model_keys = list(model_keys or MODELS)
    strategies = list(strategies or STRATEGIES)
    _check(model_keys, strategies)
    runner = Runner(settings, instance, models, progress)
    runner.observe_inputs(model_keys)
    corpus = runner.run(["corpus_snapshot", "extracted_text", "eval_set"])
    extraction = {k: v.value for k, v in corpus.asset_materializations_for_node("extracted_text")[0].metadata.items()}
    progress(
        f"extracted_text: {extraction['documents']} documents ({extraction['documents_ok']} ok, "
        f"{extraction['documents_failed']} failed), {extraction['characters']} characters, "
        f"{extraction['sections']} sections"
    )
    for doc_id, reason in extraction["failed"].items():
        progress(f"  failed: {doc_id}: {reason}")
    evaluation = {k: v.value for k, v in corpus.asset_materializations_for_node("eval_set")[0].metadata.items()}
    progress(
        f"eval_set {evaluation['version']}: {evaluation['needles']} needles, {evaluation['needle_queries']} needle "
        f"queries, {evaluation['document_queries']} document queries, {evaluation['out_of_domain_queries']} "
        f"out-of-domain ({evaluation['out_of_domain_near']} near, {evaluation['out_of_domain_off_topic']} off-topic); "
        f"checks: " + ", ".join(
            f"{c.check_name} {'passed' if c.passed else c.severity.value.lower() if c.severity.value == 'WARN' else 'FAILED'}"
            for c in corpus.get_asset_check_evaluations() if c.asset_key.path == ["eval_set"])
    )
    for strategy in strategies:
        runner.run(["chunks", "chunk_quality"], strategy, f"[{strategy}]")
    for model in model_keys:
        runner.model_partitions(model, strategies)
    runner.run(["retrieval_metrics"])


def backfill_model(
    settings: RagSettings,
    instance: DagsterInstance,
    model: str,
    models: EmbeddingModels | None = None,
    strategies: Sequence[str] | None = None,
    progress: Callable[[str], None] = print,
) -> None:
    """Bring one model up to date after its weights changed (or it was just added): observe its
    weights, rebuild its embeddings and retrieval partitions for every strategy, then the metrics.

    Unchanged chunk texts are not re-embedded if this weights revision has embedded them before.
    """
    strategies = list(strategies or STRATEGIES)
    _check([model], strategies)
    runner = Runner(settings, instance, models, progress)
    runner.observe_inputs([model])
    runner.model_partitions(model, strategies)
    runner.run(["retrieval_metrics"])
