"""The embeddings stage: the observed weights of each registered model, and a vector per chunk per
model x strategy partition, with its unit-length check."""

import warnings
from pathlib import Path

import pyarrow as pa
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetObservation,
    BetaWarning,
    DataVersionsByPartition,
    Failure,
    Output,
    asset,
    asset_check,
    observable_source_asset,
)

from rag_assets.asset_support import as_metadata, partition_tables
from rag_assets.automation import REBUILD_EMBEDDINGS
from rag_assets.dagster_compat import data_version_tag
from rag_assets.lib.embed.cluster import cluster_embedding
from rag_assets.lib.embed.models import current_revision, registry, weights_description
from rag_assets.lib.embed.partition import stored_vectors, unit_length_findings, write_embeddings
from rag_assets.lib.embed.spec import ModelUnavailableError
from rag_assets.lib.formats.progress import Progress
from rag_assets.lib.store.paths import StagedParquet
from rag_assets.lib.store.stamps import PIPELINE_VERSION
from rag_assets.partitions import (
    MODEL,
    STRATEGY,
    keys_of,
    model_partitions,
    model_strategy_partitions,
)
from rag_assets.resources import EmbeddingModels, RagSettings
from rag_assets.settings import current

NORM_TOLERANCE = 1e-5

with warnings.catch_warnings():  # observable source assets are beta, and exactly what is needed here
    warnings.simplefilter("ignore", BetaWarning)

    @observable_source_asset(
        group_name="embeddings", partitions_def=model_partitions,
        description="The installed weights of each registered model, one partition per model: its data version "
        "is the revision (a hash of its weight and tokenizer files). Observe it after a model changed: that "
        "model's embeddings and retrieval partitions show stale.")
    def embedding_model(context) -> DataVersionsByPartition:
        """The weights of each registered model, as Dagster sees them: the version is the revision.

        When a model's weight or tokenizer files change, the next observation gives its partition a
        new version and that model's embeddings partitions show as stale. Each partition's
        observation carries what the weights are (package, folder, dimension, runtime), so the asset
        page shows them. A partition that names no registry entry has no weights to observe: it is
        removed, with one warning that says how to bring it back.
        """
        models = registry(current().models_file)
        for key in context.instance.get_dynamic_partitions(model_partitions.name):
            if key not in models:
                context.instance.delete_dynamic_partition(model_partitions.name, key)
                context.log.warning(f"model partition {key} names no entry of the model registry: removed. What was "
                                    f"built for it is kept; register the model (RAG_ASSETS_MODELS_FILE) and the "
                                    f"model_registry sensor, or `rag-assets evaluate`, adds the partition again.")
                continue
            try:
                revision = current_revision(models[key])
            except ModelUnavailableError as error:
                context.log.error(str(error))
                continue
            previous = previous_revision(context.instance, context.asset_key, key)
            changed = {"weights_changed": f"{key}: revision {previous} -> {revision}: this model's embeddings and "
                                          "retrieval partitions are stale until they are rebuilt",
                       "previous_revision": previous} if previous and previous != revision else {}
            context.log_event(AssetObservation(
                asset_key=context.asset_key, partition=key, tags={data_version_tag(): revision},
                metadata=as_metadata(changed | weights_description(models[key], revision))))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BetaWarning)
            return DataVersionsByPartition({})  # each partition's version was logged with its description above


def previous_revision(instance, asset_key, partition: str) -> str | None:
    """The revision the model's partition was last observed at (its data version), or None."""
    record = instance.get_latest_data_version_record(asset_key, is_source=True, partition_key=partition)
    if record is None or record.asset_observation is None:
        return None
    return record.asset_observation.tags.get(data_version_tag())


@asset(group_name="embeddings", partitions_def=model_strategy_partitions, deps=[embedding_model],
       automation_condition=REBUILD_EMBEDDINGS, kinds={"parquet", "onnx", "pytorch"}, code_version=PIPELINE_VERSION)
def embeddings(
    context: AssetExecutionContext, settings: RagSettings, models: EmbeddingModels, chunks: pa.Table
) -> Output[StagedParquet]:
    """One float32 vector per chunk (L2-normalised where the model says so), stamped with what built it.

    Vectors come from a cache keyed by (weights revision, sha256 of the embedded text): only texts
    this revision never embedded are embedded. Also the tokens each chunk costs with this model's
    tokenizer, how many are header, and whether the encoder truncates it.
    """
    keys = keys_of(context.partition_key)
    embedder = models.get(keys[MODEL])
    cluster = cluster_embedding(settings.ray_address, settings.dask_scheduler, embedder,
                                Path(models.onnx_dir) if models.onnx_dir else None)
    staged = StagedParquet(Path(settings.home), "embeddings")  # written in row groups, moved in by the IO manager
    try:
        figures = write_embeddings(staged.path, chunks, embedder, keys[STRATEGY], Path(settings.home),
                                   Progress(f"{keys[MODEL]} x {keys[STRATEGY]}: embedded new texts", context.log.info),
                                   cluster=cluster)
        for said in figures["damaged_cache_shards"]:  # its texts were embedded again: the run is right, but say so
            context.log.warning(said)
        figures["damaged_cache_shards"] = len(figures["damaged_cache_shards"])
        refused = unit_length_findings(stored_vectors(staged.path), str(context.partition_key), NORM_TOLERANCE)[0]
        if refused:  # what the blocking check would reject is never published: the last good partition stays
            raise Failure(description="embeddings not written: vectors_are_unit_length would fail: " + "; ".join(refused))
    except BaseException:
        staged.discard()
        raise
    finally:
        if cluster:
            cluster.close()
    return Output(staged, metadata=as_metadata(figures))


@asset_check(asset=embeddings, blocking=True,
             description="Unit norms within 1e-5 and ||a-b||^2/2 == 1 - cos(a,b) on 200 x 200 chunk vectors.")
def vectors_are_unit_length(context: AssetCheckExecutionContext, settings: RagSettings) -> AssetCheckResult:
    problems, deviation, gap, count = [], 0.0, 0.0, 0
    for label, table in partition_tables(context, settings.home, "embeddings"):
        own_problems, own_deviation, own_gap, own_count = unit_length_findings(table, label, NORM_TOLERANCE)
        problems, count = problems + own_problems, count + own_count
        deviation, gap = max(deviation, own_deviation), max(gap, own_gap)
    return AssetCheckResult(
        passed=not problems, severity=AssetCheckSeverity.ERROR,
        description="\n".join(problems) or f"norms within {deviation:.1e} of 1; the identity holds to {gap:.1e}",
        metadata={"largest_norm_deviation": deviation, "largest_identity_difference": gap, "vectors": count},
    )
