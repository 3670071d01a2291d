import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
from dagster import (
    AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity, AssetExecutionContext, BetaWarning, DataVersionsByPartition, MetadataValue,
    Output, asset, asset_check, observable_source_asset,
)

from rag_assets.asset_support import partition_tables
from rag_assets.lib.chunk_report import token_stats, truncated
from rag_assets.lib.chunking import header_of_text
from rag_assets.lib.embedding import MODELS, ModelUnavailableError, current_revision
from rag_assets.lib.embedding_cache import EmbeddingCache, embed_with_cache
from rag_assets.lib.stamps import PIPELINE_VERSION
from rag_assets.lib.vector_checks import distance_identity_gap, norm_deviation
from rag_assets.partitions import MODEL_PARTITIONS_NAME, model_partitions, model_strategy_partitions
from rag_assets.resources import EmbeddingModels, RagSettings

BATCH = 64
NORM_TOLERANCE = 1e-5

with warnings.catch_warnings():  # observable source assets are beta, and exactly what is needed here
    warnings.simplefilter("ignore", BetaWarning)

    @observable_source_asset(group_name="embeddings", partitions_def=model_partitions)
    def embedding_model(context) -> DataVersionsByPartition:
        """The weights of each registered model, as Dagster sees them: the version is the revision.

        When a model's weight or tokenizer files change, the next observation gives its partition a
        new version and that model's embeddings partitions show as stale.
        """
        versions = {}
        for key in context.instance.get_dynamic_partitions(MODEL_PARTITIONS_NAME):
            if key not in MODELS:
                context.log.warning(f"model partition {key} is no longer in the registry")
                continue
            try:
                versions[key] = current_revision(MODELS[key])
            except ModelUnavailableError as error:
                context.log.error(str(error))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BetaWarning)
            return DataVersionsByPartition(versions)


def _vectors(table: pa.Table, dimension: int) -> np.ndarray:
    flat = np.asarray(table.column("vector").combine_chunks().flatten().to_numpy(), dtype=np.float32)
    return flat.reshape(len(table), dimension)


@asset(group_name="embeddings", partitions_def=model_strategy_partitions, deps=[embedding_model])
def embeddings(
    context: AssetExecutionContext, settings: RagSettings, models: EmbeddingModels, chunks: pa.Table
) -> Output[pa.Table]:
    """One float32 vector per chunk (L2-normalised where the model says so), stamped with what built it.

    Vectors come from a cache keyed by (weights revision, sha256 of the embedded text): only texts
    this revision never embedded are embedded. Also the tokens each chunk costs with this model's
    tokenizer, how many are header, and whether the encoder truncates it.
    """
    keys = context.partition_key.keys_by_dimension
    model = models.get(keys["model"])
    texts = chunks.column("text").to_pylist()
    cache = EmbeddingCache(Path(settings.home) / "embedding_cache" / model.key / model.revision, model.dimension)
    started = time.perf_counter()
    vectors, embedded, reused = embed_with_cache(
        texts, model.embed, cache, BATCH, lambda done, total: context.log.info(f"embedded {done}/{total} new texts"))
    seconds = time.perf_counter() - started
    headers = [header_of_text(text, span_start, end) for text, span_start, end in
               zip(texts, chunks.column("span_start").to_pylist(), chunks.column("end").to_pylist())]
    tokens = model.count_tokens(texts)
    header_tokens = [count if header else 0 for header, count in zip(headers, model.count_tokens(headers))]
    window = model.window
    stamp = {
        "model": model.key, "revision": model.revision, "dimension": model.dimension,
        "normalized": model.normalized, "pipeline_version": PIPELINE_VERSION,
        "extractor_version": chunks.column("extractor_version")[0].as_py() if len(chunks) else None,
        "snapshot_id": chunks.column("snapshot_id")[0].as_py() if len(chunks) else None,
        "strategy": keys["strategy"],
    }
    table = pa.table({
        "chunk_id": chunks.column("chunk_id"),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), model.dimension),
        "tokens": pa.array(tokens, pa.int64()),
        "header_tokens": pa.array(header_tokens, pa.int64()),
        # the encoder silently drops what lies past its window
        "truncated": pa.array([truncated(count, model.special_tokens, window) for count in tokens], pa.bool_()),
        **{name: pa.array([value] * len(texts)) for name, value in stamp.items()},
    })
    stats = token_stats(tokens, header_tokens, model.special_tokens, window)
    return Output(
        table,
        metadata={
            "chunks": table.num_rows, "texts_embedded": embedded, "texts_reused": reused,
            "seconds": round(seconds, 2),
            "embedded_per_second": round(embedded / seconds, 1) if embedded and seconds else 0.0,
            **{k: v for k, v in stats.items() if k != "window"}, "window": window or "none",
            "header_token_share": round(stats["header_token_share"], 4), "stamp": MetadataValue.json(stamp),
            "runtime": getattr(model, "runtime", "native"),
        },
    )


@asset_check(asset=embeddings, blocking=True,
             description="Unit norms within 1e-5 and ||a-b||^2/2 == 1 - cos(a,b) on 200 x 200 chunk vectors.")
def vectors_are_unit_length(context: AssetCheckExecutionContext, settings: RagSettings) -> AssetCheckResult:
    problems, deviation, gap, count = [], 0.0, 0.0, 0
    for label, table in partition_tables(context, settings.home, "embeddings"):
        if not len(table) or not table.column("normalized")[0].as_py():
            continue
        vectors = _vectors(table, table.column("dimension")[0].as_py())
        count += len(vectors)
        own_deviation, own_gap = norm_deviation(vectors), distance_identity_gap(vectors)
        deviation, gap = max(deviation, own_deviation), max(gap, own_gap)
        if own_deviation > NORM_TOLERANCE:
            problems.append(f"{label}: largest norm deviation {own_deviation:.2e} exceeds {NORM_TOLERANCE:.0e}")
        if own_gap > NORM_TOLERANCE:
            problems.append(f"{label}: ||a-b||^2/2 and 1 - cos differ by up to {own_gap:.2e}")
    return AssetCheckResult(
        passed=not problems, severity=AssetCheckSeverity.ERROR,
        description="\n".join(problems) or f"norms within {deviation:.1e} of 1; the identity holds to {gap:.1e}",
        metadata={"largest_norm_deviation": deviation, "largest_identity_difference": gap, "vectors": count},
    )
