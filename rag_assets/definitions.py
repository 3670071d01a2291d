"""The one Definitions object of rag_assets: the assets and their checks, the named jobs
(``jobs.py``), the schedules and sensors (``schedules.py``), the executor (``executors.py``) and
the resources, bound to the settings (``rag_assets.settings``).

``defs`` is loaded lazily (Dagster's ``@definitions``): importing this module reads no setting and
no file; ``dagster dev``, ``dg`` and the daemon call it when they load the code location, so a
wrong setting is reported then, naming its variable.
"""

from pathlib import Path

from dagster import AssetsDefinition, Definitions, definitions

from rag_assets.assets.chunks import chunk_quality, chunking_strategy, chunks
from rag_assets.assets.corpus import corpus_folder, corpus_snapshot
from rag_assets.assets.embeddings import (
    embedding_model,
    embeddings,
    vectors_are_unit_length,
)
from rag_assets.assets.eval_set import EVAL_SET_CHECKS, eval_set
from rag_assets.assets.external import external_retriever, external_runs
from rag_assets.assets.extraction import (
    every_document_extracted,
    extracted_text,
    extraction_code_version,
    no_source_syntax_left,
)
from rag_assets.assets.metrics import (
    metrics_stamps_agree,
    no_significant_regression,
    retrieval_metrics,
)
from rag_assets.assets.publish import published_evaluation
from rag_assets.assets.retrieval import (
    lexical_code_version,
    lexical_runs,
    refusal_calibration,
    retrieval_runs,
    retrieval_stamps_agree,
)
from rag_assets.executors import executor_for
from rag_assets.jobs import JOBS
from rag_assets.lib.store import paths
from rag_assets.resources import EmbeddingModels, ParquetIOManager, RagSettings
from rag_assets.schedules import (
    automation_sensor,
    external_observation,
    input_observation,
    model_registry,
    nightly_completion,
    nightly_schedule,
    strategy_observation,
)
from rag_assets.settings import current

ASSETS = [
    corpus_folder, embedding_model, chunking_strategy, corpus_snapshot, extracted_text, eval_set, chunks, chunk_quality, lexical_runs,
    embeddings, retrieval_runs, refusal_calibration, external_retriever, external_runs, retrieval_metrics,
    published_evaluation,
]

ASSET_CHECKS = [
    every_document_extracted, no_source_syntax_left, *EVAL_SET_CHECKS, vectors_are_unit_length, retrieval_stamps_agree, metrics_stamps_agree,
    no_significant_regression,
]


def with_owners_and_tags(assets: list, owners: list[str], tags: dict[str, str]) -> list:
    """The assets with the settings' owners and tags on every spec (observable sources keep theirs)."""
    if not owners and not tags:
        return assets
    return [asset.map_asset_specs(lambda spec: spec.replace_attributes(
        owners=[*spec.owners, *owners], tags={**spec.tags, **tags})) if isinstance(asset, AssetsDefinition) else asset
        for asset in assets]


def with_parameters_versioned(assets: list, settings: RagSettings) -> list:
    """The assets with the code versions of the settings they are built with: ``lexical_runs``' of the BM25
    parameters, ``extracted_text``'s of whether a tree's code may run; a changed setting shows them stale, and
    the runner and the automation rebuild them."""
    versions = {"lexical_runs": lexical_code_version(settings.bm25_config()),
                "extracted_text": extraction_code_version(settings.run_tree_code)}
    versioned = []
    for asset in assets:
        version = versions.get(asset.key.to_user_string()) if asset is lexical_runs or asset is extracted_text else None
        versioned.append(asset.map_asset_specs(lambda spec, version=version: spec.replace_attributes(
            code_version=version)) if version else asset)
    return versioned


def build_definitions(settings: RagSettings | None = None, models: EmbeddingModels | None = None) -> Definitions:
    """The graph bound to a storage folder, corpus and evaluation set (defaults: the settings')."""
    settings = settings or RagSettings()
    configured = current()
    return Definitions(
        assets=with_owners_and_tags(with_parameters_versioned(ASSETS, settings), settings.owners, settings.asset_tags),
        asset_checks=ASSET_CHECKS,
        jobs=JOBS,
        schedules=[input_observation, strategy_observation, external_observation, nightly_schedule(settings.nightly_cron, settings.nightly_timezone)],
        sensors=[model_registry, nightly_completion, automation_sensor(configured)],
        executor=executor_for(configured.scale_out),
        resources={
            "settings": settings,
            "models": models or EmbeddingModels(onnx_dir=str(paths.onnx_dir(Path(settings.home))),
                                                models_file=settings.models_file),
            "io_manager": ParquetIOManager(home=settings.home, object_store=settings.object_store),
        },
    )


@definitions
def defs() -> Definitions:
    """The code location ``dagster dev``, ``dg`` and the daemon load (workspace.yaml)."""
    return build_definitions()
