"""The one Definitions object of rag_assets."""

from dagster import Definitions

from rag_assets.assets.chunks import chunks
from rag_assets.assets.corpus import corpus_snapshot
from rag_assets.assets.embeddings import embeddings
from rag_assets.assets.evaluation import eval_set
from rag_assets.assets.extraction import extracted_text
from rag_assets.assets.metrics import retrieval_metrics
from rag_assets.assets.retrieval import retrieval_runs
from rag_assets.resources import EmbeddingModels, ParquetIOManager, RagSettings

ASSETS = [corpus_snapshot, extracted_text, eval_set, chunks, embeddings, retrieval_runs, retrieval_metrics]


def build_definitions(settings: RagSettings | None = None, models: EmbeddingModels | None = None) -> Definitions:
    """The graph bound to a storage folder, corpus and evaluation set (defaults: the project's)."""
    settings = settings or RagSettings()
    return Definitions(
        assets=ASSETS,
        resources={
            "settings": settings,
            "models": models or EmbeddingModels(),
            "io_manager": ParquetIOManager(home=settings.home),
        },
    )


defs = build_definitions()
