"""The retrieval stage: every query against each strategy's lexical index (BM25, once per strategy) and each
model x strategy index, judged, and the refusal calibration of its distances."""

import hashlib
import json

import pyarrow as pa
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetIn,
    Failure,
    MetadataValue,
    Output,
    asset,
    asset_check,
)

from rag_assets.asset_support import as_metadata, partition_tables, snapshot_of, table_version
from rag_assets.automation import REBUILD_LEXICAL, REBUILD_REFUSAL, REBUILD_RETRIEVAL
from rag_assets.lib.evaluate.refusal import RULE
from rag_assets.lib.evaluate.refusal_calibration import calibrate_partition, describe
from rag_assets.lib.evaluate.report import inline
from rag_assets.lib.retrieve.bm25 import BM25Config
from rag_assets.lib.retrieve.engine import StaleRanking
from rag_assets.lib.retrieve.runs import given_rankings, retrieve_and_judge, retrieve_and_judge_lexical
from rag_assets.lib.store.stamps import (
    PIPELINE_VERSION,
    distinct_stamps,
    stamp_problems,
    stamps_of,
)
from rag_assets.partitions import MODEL, STRATEGY, keys_of, model_strategy_partitions, strategy_partitions
from rag_assets.resources import EmbeddingModels, RagSettings


def lexical_code_version(bm25_config: BM25Config) -> str:
    """``lexical_runs``' code version: the pipeline's and the BM25 parameters', so that a changed parameter shows
    its partitions stale (set by ``definitions.build_definitions`` from the settings it binds)."""
    parameters = json.dumps(bm25_config.model_dump(), sort_keys=True)
    return f"{PIPELINE_VERSION}-bm25-{hashlib.sha256(parameters.encode()).hexdigest()[:8]}"


@asset(group_name="retrieval", partitions_def=strategy_partitions, automation_condition=REBUILD_LEXICAL,
       kinds={"python", "parquet"}, code_version=lexical_code_version(BM25Config()))
def lexical_runs(
    context: AssetExecutionContext, settings: RagSettings, eval_set: pa.Table, extracted_text: pa.Table,
    chunks: pa.Table,
) -> Output[pa.Table]:
    """Every query against the retrievers that use no embedding model (BM25), once per strategy: judged, recorded
    under the retriever's name in the model column, and each ranking kept to the depth every model partition's
    hybrid fusion and rerankers read, so that BM25 is computed once, not once per model."""
    table, figures = retrieve_and_judge_lexical(eval_set, extracted_text, chunks, settings.retrievers, settings.top_k,
                                                str(context.partition_key), table_version(chunks),
                                                settings.bm25_config())
    refused = stamp_problems(distinct_stamps(stamps_of(table)), {}, expected=snapshot_of(extracted_text),
                             model_free=figures["retrievers"])
    if refused:  # rows of another snapshot or pipeline are never published: the last good partition stays
        raise Failure(description="lexical_runs not written: " + "; ".join(refused))
    return Output(table, metadata=as_metadata(figures))


# a direct dependency on the observed weights, so a weight change marks these partitions stale too
@asset(group_name="retrieval", partitions_def=model_strategy_partitions, deps=["embedding_model"],
       automation_condition=REBUILD_RETRIEVAL, kinds={"python", "parquet", "onnx"}, code_version=PIPELINE_VERSION)
def retrieval_runs(
    context: AssetExecutionContext,
    settings: RagSettings,
    models: EmbeddingModels,
    eval_set: pa.Table,
    extracted_text: pa.Table,
    chunks: pa.Table,
    embeddings: pa.Table,
    lexical_runs: pa.Table,
) -> Output[pa.Table]:
    """Every query of the evaluation set against one model x strategy index, for the retrievers that use the model:
    top k and where the answer landed. Hybrid fuses the strategy's BM25 ranking from ``lexical_runs``."""
    keys = keys_of(context.partition_key)
    source = f"lexical_runs {keys[STRATEGY]}"
    try:
        given = given_rankings(lexical_runs, eval_set, table_version(chunks), settings.bm25_config(), source)
        table, figures = retrieve_and_judge(
            eval_set, extracted_text, chunks, embeddings, models.get(keys[MODEL]),
            settings.retrievers, settings.top_k, settings.cross_encoder, partition=str(context.partition_key),
            bm25_config=settings.bm25_config(), home=settings.home, ann_config=settings.hnsw_config(),
            dense_block_rows=settings.dense_block_rows, given=given, source=source)
    except StaleRanking as error:
        raise Failure(description=f"retrieval_runs {context.partition_key} not written: {error} (materialise "
                      f"lexical_runs for strategy {keys[STRATEGY]})") from error
    stamps = distinct_stamps(stamps_of(table) + stamps_of(embeddings))
    refused = stamp_problems(stamps, models.installed_revisions(stamps), expected=snapshot_of(extracted_text))
    if refused:  # what the blocking check would reject is never published: the last good partition stays
        raise Failure(description="retrieval_runs not written: retrieval_stamps_agree would fail: " + "; ".join(refused))
    return Output(table, metadata=as_metadata(figures))


@asset_check(asset=retrieval_runs, blocking=True, additional_ins={"corpus_snapshot": AssetIn()},
             description="Retrieval rows and their index carry one stamp, matching the registry and the corpus snapshot.")
def retrieval_stamps_agree(
    context: AssetCheckExecutionContext, settings: RagSettings, models: EmbeddingModels, corpus_snapshot: pa.Table
) -> AssetCheckResult:
    stamps = []
    for asset_name in ("retrieval_runs", "embeddings"):
        for _, table in partition_tables(context, settings.home, asset_name):
            stamps += stamps_of(table)
    unique = distinct_stamps(stamps)
    problems = stamp_problems(unique, models.installed_revisions(unique), expected=snapshot_of(corpus_snapshot))
    return AssetCheckResult(
        passed=not problems, severity=AssetCheckSeverity.ERROR,
        description="\n".join(problems) or "one build: stamps match each other, the registry and the corpus snapshot",
        metadata={"stamps": MetadataValue.json(sorted(unique, key=str))},
    )


@asset(group_name="retrieval", partitions_def=model_strategy_partitions, automation_condition=REBUILD_REFUSAL,
       kinds={"python", "parquet"}, code_version=PIPELINE_VERSION)
def refusal_calibration(retrieval_runs: pa.Table) -> Output[pa.Table]:
    """When to say no: every cut of the distance grid applied as the real gate (at most 4 chunks, only
    those under the cut) to every in-domain and out-of-domain query, counted; the separability of the
    two (AUROC with a bootstrap interval) and a suggested cut by the rule in the metadata."""
    table, suggestions, figures = calibrate_partition(retrieval_runs)
    return Output(table, metadata={
        "suggested_cuts": MetadataValue.md("\n\n".join(f"- {describe(s)}" for s in suggestions) + f"\n\nRule: {RULE}."),
        **{f"cut_{s['retriever']}": float(s["cut"]) for s in suggestions},
        **{f"auroc_{s['retriever']}": float(s["auroc"]) for s in suggestions if s["auroc"] is not None},
        "plots": MetadataValue.md("\n\n".join(inline(png, name) for name, png in figures.items())),
    })
