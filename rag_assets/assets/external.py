"""A team's own retrievers: what each says its index is (an observation), and every query asked of it,
judged by the needle rule into the retrieval rows' columns (``rag_assets.lib.retrieve.external``)."""

import warnings

import pyarrow as pa
from dagster import (
    AssetExecutionContext,
    AssetObservation,
    BetaWarning,
    DataVersionsByPartition,
    Failure,
    MetadataValue,
    Output,
    asset,
    observable_source_asset,
)

from rag_assets.asset_support import as_metadata
from rag_assets.automation import REBUILD_EXTERNAL
from rag_assets.dagster_compat import data_version_tag
from rag_assets.environment import inherited
from rag_assets.lib.ingest.documents import canonical_texts
from rag_assets.lib.retrieve.external import (
    ExternalRetrieverError,
    ExternalSpec,
    QueryFailed,
    QueryLimits,
    ask_all,
    asker,
    external_rows,
    external_stamp,
    failure_of,
    index_version,
    registry,
)
from rag_assets.lib.store.schemas import EXTERNAL_RUNS, table_from_rows
from rag_assets.lib.store.stamps import PIPELINE_VERSION
from rag_assets.partitions import external_partitions, sync_external_partitions
from rag_assets.resources import EmbeddingModels, RagSettings

with warnings.catch_warnings():  # observable source assets are beta, and exactly what is needed here
    warnings.simplefilter("ignore", BetaWarning)

    @observable_source_asset(
        group_name="retrieval", partitions_def=external_partitions,
        description="Each external retriever of the registry (RAG_ASSETS_RETRIEVERS_FILE), one partition each: its "
        "data version is the index version it reports, or a hash of its answers to fixed probe questions, so a "
        "re-indexed store shows its runs stale.")
    def external_retriever(context, settings: RagSettings, models: EmbeddingModels) -> DataVersionsByPartition:
        """The external retrievers as Dagster sees them: the version is their index's."""
        specs = registry(settings.retrievers_file)
        added, removed = sync_external_partitions(context.instance, specs)
        for key in removed:
            context.log.warning(f"external retriever {key} is no longer registered: its partition is removed (what "
                                "was built for it is kept; register it again to bring it back)")
        for key, spec in specs.items():
            try:
                version = index_version(spec, _asker(models, spec, settings), inherited(spec.variables()))
            except Exception as error:  # noqa: BLE001 - one retriever that does not answer never hides the others
                context.log.error(f"external retriever {key}: {type(error).__name__}: {error}")
                continue
            context.log_event(AssetObservation(asset_key=context.asset_key, partition=key,
                                               tags={data_version_tag(): version},
                                               metadata=as_metadata(spec.describe() | {"index_version": version})))
        return DataVersionsByPartition({})  # each partition's version was logged with its description above


def _asker(models: EmbeddingModels, spec: ExternalSpec, settings: RagSettings):
    """How to ask the entry's retriever: with the query vectors of the registered model it names (a store
    queried by vector), the values of the environment variables its secrets come from, and what one query may
    take (the settings' deadline and answer size)."""
    model = spec.embedding_model()
    return asker(spec, models.get(model).embed_queries if model else None, inherited(spec.variables()),
                 QueryLimits(settings.external_deadline_seconds, settings.external_max_answer_bytes))


@asset(group_name="retrieval", partitions_def=external_partitions, deps=[external_retriever],
       automation_condition=REBUILD_EXTERNAL, kinds={"python", "parquet"}, code_version=PIPELINE_VERSION)
def external_runs(context: AssetExecutionContext, settings: RagSettings, models: EmbeddingModels, eval_set: pa.Table,
                  extracted_text: pa.Table) -> Output[pa.Table]:
    """Every query of the evaluation set asked of one external retriever (same top k), judged by the needle rule:
    the same columns as retrieval_runs, with each query's error and how each hit was located."""
    spec = registry(settings.retrievers_file).get(context.partition_key)
    if spec is None:
        raise Failure(description=f"external retriever {context.partition_key} is not in the retrievers file "
                      "(RAG_ASSETS_RETRIEVERS_FILE)")
    ask = _asker(models, spec, settings)
    eval_rows = eval_set.to_pylist()
    answered = ask_all(ask, [(row["query_id"], row["question"]) for row in eval_rows], settings.top_k,
                       spec.in_flight_queries())
    failed = failure_of(spec.key, answered)
    if failed:  # too many queries erred: this retriever fails alone (the metrics leave it out, by its status)
        raise Failure(description=failed)
    first = extracted_text.slice(0, 1).to_pylist()[0]
    try:
        version = index_version(spec, ask, inherited(spec.variables()))
    except (ExternalRetrieverError, QueryFailed) as error:
        raise Failure(description=f"retriever {spec.key!r}: its index version could not be read ({error}). "
                      "Nothing was recorded for it") from None
    stamp = external_stamp(spec.key, version, first["snapshot_id"], first["extractor_version"])
    try:
        rows, figures = external_rows(spec.key, answered, eval_rows, canonical_texts(extracted_text.to_pylist()), stamp)
    except ExternalRetrieverError as error:
        raise Failure(description=str(error)) from None
    metadata = as_metadata(figures) | {"retriever": MetadataValue.json(spec.describe())}
    return Output(table_from_rows(EXTERNAL_RUNS, rows, "external_runs"), metadata=metadata)
