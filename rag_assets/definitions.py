"""The one Definitions object of rag_assets."""

from dagster import DefaultScheduleStatus, Definitions, ScheduleDefinition, define_asset_job

from rag_assets.assets.chunks import chunk_quality, chunks
from rag_assets.assets.corpus import corpus_folder, corpus_snapshot
from rag_assets.assets.embeddings import embeddings
from rag_assets.assets.evaluation import EVAL_SET_CHECKS, eval_set
from rag_assets.assets.extraction import every_document_extracted, extracted_text
from rag_assets.assets.metrics import retrieval_metrics
from rag_assets.assets.retrieval import retrieval_runs
from rag_assets.resources import EmbeddingModels, ParquetIOManager, RagSettings

ASSETS = [
    corpus_folder, corpus_snapshot, extracted_text, eval_set, chunks, chunk_quality, embeddings, retrieval_runs,
    retrieval_metrics,
]

ASSET_CHECKS = [every_document_extracted, *EVAL_SET_CHECKS]

corpus_observation = ScheduleDefinition(
    name="corpus_observation",
    job=define_asset_job("observe_corpus", selection=[corpus_folder]),
    cron_schedule="*/15 * * * *",
    default_status=DefaultScheduleStatus.RUNNING,
    description="Hashes the corpus folder so that a changed document marks corpus_snapshot stale.",
)


def build_definitions(settings: RagSettings | None = None, models: EmbeddingModels | None = None) -> Definitions:
    """The graph bound to a storage folder, corpus and evaluation set (defaults: the project's)."""
    settings = settings or RagSettings()
    return Definitions(
        assets=ASSETS,
        asset_checks=ASSET_CHECKS,
        schedules=[corpus_observation],
        resources={
            "settings": settings,
            "models": models or EmbeddingModels(),
            "io_manager": ParquetIOManager(home=settings.home),
        },
    )


defs = build_definitions()
