"""The one Definitions object of rag_assets."""

import os
from pathlib import Path

from dagster import (
    AssetsDefinition,
    AssetSelection,
    AutomationConditionSensorDefinition,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    Definitions,
    ScheduleDefinition,
    SensorResult,
    define_asset_job,
    in_process_executor,
    multiprocess_executor,
    sensor,
)

from rag_assets.assets.chunks import chunk_quality, chunks
from rag_assets.assets.corpus import corpus_folder, corpus_snapshot
from rag_assets.assets.embeddings import embedding_model, embeddings, vectors_are_unit_length
from rag_assets.assets.evaluation import EVAL_SET_CHECKS, eval_set
from rag_assets.assets.extraction import every_document_extracted, extracted_text
from rag_assets.assets.metrics import metrics_stamps_agree, no_significant_regression, retrieval_metrics
from rag_assets.assets.retrieval import refusal_calibration, retrieval_runs, retrieval_stamps_agree
from rag_assets.lib import paths
from rag_assets.lib.embedding import MODELS
from rag_assets.partitions import missing_model_partitions, model_partitions
from rag_assets.resources import EmbeddingModels, ParquetIOManager, RagSettings

ASSETS = [
    corpus_folder, embedding_model, corpus_snapshot, extracted_text, eval_set, chunks, chunk_quality, embeddings, retrieval_runs,
    refusal_calibration, retrieval_metrics,
]

ASSET_CHECKS = [
    every_document_extracted, *EVAL_SET_CHECKS, vectors_are_unit_length, retrieval_stamps_agree, metrics_stamps_agree,
    no_significant_regression,
]

TRIGGER_TAG = "rag_assets/trigger"  # cli, nightly, automation (Dagster tags its own runs too)
COMMAND_TAG = "rag_assets/command"  # evaluate, backfill
MODELS_TAG = "rag_assets/models"
STRATEGIES_TAG = "rag_assets/strategies"

observe_inputs = define_asset_job("observe_inputs", selection=[corpus_folder, embedding_model],
                                  description="Hash the corpus folder and every model's weights.")
# the named jobs `rag-assets` runs, one per partitioning, so the runs list tells what each run built
evaluation_inputs = define_asset_job("evaluation_inputs", selection=[corpus_snapshot, extracted_text, eval_set],
                                     description="Snapshot, extract and check the evaluation set.")
chunking = define_asset_job("chunking", selection=[chunks, chunk_quality],
                            description="One chunking strategy: its chunks and what it costs.")
model_partition = define_asset_job("model_partition", selection=[embeddings, retrieval_runs, refusal_calibration],
                                   description="One model x strategy: embeddings, every query through every retriever, "
                                   "and when to refuse.")
evaluation_metrics = define_asset_job("evaluation_metrics", selection=[retrieval_metrics],
                                      description="Append an evaluation run of every materialised partition to DuckDB.")
nightly_evaluation_job = define_asset_job(
    "nightly_evaluation", selection=[corpus_folder, embedding_model, retrieval_metrics],
    tags={TRIGGER_TAG: "nightly"},
    description="Observe the corpus and the models, then append a fresh evaluation run over every partition; "
    "what the observations found changed is rebuilt by the automation sensor.")
JOBS = [observe_inputs, evaluation_inputs, chunking, model_partition, evaluation_metrics, nightly_evaluation_job]

input_observation = ScheduleDefinition(
    name="input_observation",
    job=observe_inputs,
    cron_schedule="*/15 * * * *",
    default_status=DefaultScheduleStatus.RUNNING,
    description="Hashes the corpus folder and every model's weights: a change marks what was built from them stale.",
)


@sensor(minimum_interval_seconds=60, default_status=DefaultSensorStatus.RUNNING)
def model_registry(context) -> SensorResult:
    """Adds a model partition for every entry of the model registry that has none yet."""
    new = missing_model_partitions(context.instance, MODELS)
    return SensorResult(dynamic_partitions_requests=[model_partitions.build_add_request(new)] if new else [])


automation = AutomationConditionSensorDefinition(
    "rag_assets_automation", target=AssetSelection.all(),
    # RAG_ASSETS_AUTOMATION=stopped starts the UI with it off (turn it on from the Automation page)
    default_status=DefaultSensorStatus.STOPPED if os.environ.get("RAG_ASSETS_AUTOMATION") == "stopped"
    else DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30, run_tags={TRIGGER_TAG: "automation"},
    description="Rebuilds what a corpus or model change made stale, down to the metrics (rag_assets/automation.py).",
)


def nightly_schedule(settings: RagSettings) -> ScheduleDefinition:
    return ScheduleDefinition(
        name="nightly_evaluation",
        job=nightly_evaluation_job,
        cron_schedule=settings.nightly_cron,
        execution_timezone=settings.nightly_timezone,
        default_status=DefaultScheduleStatus.RUNNING,
        tags={TRIGGER_TAG: "nightly"},
        description="Every night: observe the corpus and the models, and append an evaluation run to the history, "
        "even when nothing changed (a flat line is evidence too).",
    )


def with_owners_and_tags(assets: list, owners: list[str], tags: dict[str, str]) -> list:
    """The assets with the settings' owners and tags on every spec (observable sources keep theirs)."""
    if not owners and not tags:
        return assets
    return [asset.map_asset_specs(lambda spec: spec.replace_attributes(
        owners=[*spec.owners, *owners], tags={**spec.tags, **tags})) if isinstance(asset, AssetsDefinition) else asset
        for asset in assets]


EXECUTORS = {
    # one process per run, not per step: a step pays no interpreter and model start of its own
    "in_process": in_process_executor,
    # a process per step, RAG_ASSETS_MAX_STEPS at once: the daemon's runs of several partitions, each
    # run's steps beside the others' (see README, Scaling out)
    "multiprocess": multiprocess_executor.configured(
        {"max_concurrent": int(os.environ.get("RAG_ASSETS_MAX_STEPS", "0"))}, name="multiprocess"),
}


def k8s_executor():
    """dagster-k8s's ``k8s_job_executor``: a Kubernetes Job per step, launched from the run's pod, with
    the image, namespace and environment of the K8sRunLauncher (the Helm chart's); at most
    RAG_ASSETS_MAX_STEPS steps of a run at once when set. ``pip install -e '.[k8s]'``."""
    try:
        from dagster_k8s import k8s_job_executor
    except ImportError as error:
        raise ValueError("RAG_ASSETS_EXECUTOR='k8s' needs dagster-k8s: pip install -e '.[k8s]'") from error
    steps = int(os.environ.get("RAG_ASSETS_MAX_STEPS", "0"))
    return k8s_job_executor.configured({"max_concurrent": steps}, name="k8s") if steps else k8s_job_executor


def executor_named(name: str):
    """The executor ``name`` of ``EXECUTORS``, or ``k8s`` (``$RAG_ASSETS_EXECUTOR``, default in_process)."""
    if name == "k8s":
        return k8s_executor()
    if name not in EXECUTORS:
        raise ValueError(f"RAG_ASSETS_EXECUTOR={name!r}: the executors are {', '.join(EXECUTORS)}, k8s")
    return EXECUTORS[name]


def build_definitions(settings: RagSettings | None = None, models: EmbeddingModels | None = None) -> Definitions:
    """The graph bound to a storage folder, corpus and evaluation set (defaults: the project's)."""
    settings = settings or RagSettings()
    return Definitions(
        assets=with_owners_and_tags(ASSETS, settings.owners, settings.asset_tags),
        asset_checks=ASSET_CHECKS,
        jobs=JOBS,
        schedules=[input_observation, nightly_schedule(settings)],
        sensors=[model_registry, automation],
        executor=executor_named(os.environ.get("RAG_ASSETS_EXECUTOR", "in_process")),
        resources={
            "settings": settings,
            "models": models or EmbeddingModels(onnx_dir=str(paths.onnx_dir(Path(settings.home)))),
            "io_manager": ParquetIOManager(home=settings.home),
        },
    )


defs = build_definitions()
