"""The one Definitions object of rag_assets."""

from pathlib import Path

from dagster import (
    DefaultScheduleStatus,
    DefaultSensorStatus,
    Definitions,
    ScheduleDefinition,
    SensorResult,
    define_asset_job,
    sensor,
)

from rag_assets.assets.chunks import chunk_quality, chunks
from rag_assets.assets.corpus import corpus_folder, corpus_snapshot
from rag_assets.assets.embeddings import embedding_model, embeddings, vectors_are_unit_length
from rag_assets.assets.evaluation import EVAL_SET_CHECKS, eval_set
from rag_assets.assets.extraction import every_document_extracted, extracted_text
from rag_assets.assets.metrics import metrics_stamps_agree, retrieval_metrics
from rag_assets.assets.retrieval import retrieval_runs, retrieval_stamps_agree
from rag_assets.lib import paths
from rag_assets.lib.embedding import MODELS
from rag_assets.partitions import missing_model_partitions, model_partitions
from rag_assets.resources import EmbeddingModels, ParquetIOManager, RagSettings

ASSETS = [
    corpus_folder, embedding_model, corpus_snapshot, extracted_text, eval_set, chunks, chunk_quality, embeddings, retrieval_runs,
    retrieval_metrics,
]

ASSET_CHECKS = [
    every_document_extracted, *EVAL_SET_CHECKS, vectors_are_unit_length, retrieval_stamps_agree, metrics_stamps_agree,
]

observe_inputs = define_asset_job("observe_inputs", selection=[corpus_folder, embedding_model])

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


def build_definitions(settings: RagSettings | None = None, models: EmbeddingModels | None = None) -> Definitions:
    """The graph bound to a storage folder, corpus and evaluation set (defaults: the project's)."""
    settings = settings or RagSettings()
    return Definitions(
        assets=ASSETS,
        asset_checks=ASSET_CHECKS,
        schedules=[input_observation],
        sensors=[model_registry],
        resources={
            "settings": settings,
            "models": models or EmbeddingModels(onnx_dir=str(paths.onnx_dir(Path(settings.home)))),
            "io_manager": ParquetIOManager(home=settings.home),
        },
    )


defs = build_definitions()
