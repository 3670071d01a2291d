"""The chunks stage: each registered chunking strategy as it is defined now (one partition per strategy, its
version the definition and the splitter library's version), its chunks, and what each strategy costs in
answers."""

import json
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

from rag_assets.asset_support import as_metadata, preview_table, table_version, versioned_output
from rag_assets.automation import REBUILD_CHUNK_QUALITY, REBUILD_CHUNKS
from rag_assets.dagster_compat import data_version_tag
from rag_assets.lib.embed.models import RegistryModels, registry
from rag_assets.lib.evaluate.chunk_quality import quality_code_version, quality_row
from rag_assets.lib.ingest.chunking import character_stats, chunking_code_version, strategy_version
from rag_assets.lib.ingest.samples import sample_chunks
from rag_assets.lib.ingest.splitters import SplitterError, library_version, strategy_chunk_rows
from rag_assets.lib.ingest.strategies import StrategyFileError
from rag_assets.lib.store.schemas import CHUNK_QUALITY, CHUNKS, table_from_rows
from rag_assets.partitions import registered_strategies, strategy_partitions
from rag_assets.settings import current

UNLOCATED = b"rag_assets.unlocated"  # the chunks table's schema metadata: what a splitter returned, not located

with warnings.catch_warnings():  # observable source assets are beta, and exactly what is needed here
    warnings.simplefilter("ignore", BetaWarning)

    @observable_source_asset(
        group_name="chunks", partitions_def=strategy_partitions,
        description="Each registered chunking strategy as it is defined now, one partition per strategy: its data "
        "version is a hash of its definition (size, overlap, unit, splitter, options) and of its splitter "
        "library's installed version. Changing one strategy, or upgrading its library, stales exactly its "
        "partitions.")
    def chunking_strategy(context) -> DataVersionsByPartition:
        """The definition of each registered strategy, as Dagster sees it. A partition that names no registered
        strategy is removed, with one warning saying how to bring it back; a strategy whose library is missing
        is one error line, and its partition keeps its last version."""
        strategies = registered_strategies()
        for key in context.instance.get_dynamic_partitions(strategy_partitions.name):
            if key not in strategies:
                context.instance.delete_dynamic_partition(strategy_partitions.name, key)
                context.log.warning(f"strategy partition {key} names no registered strategy: removed. What was "
                                    "built for it is kept; register it again (RAG_ASSETS_STRATEGIES_FILE) and "
                                    "the model_registry sensor, or `rag-assets evaluate`, adds the partition.")
                continue
            strategy = strategies[key]
            try:
                library = library_version(strategy, RegistryModels(registry(current().models_file)))
            except SplitterError as error:
                context.log.error(str(error))
                continue
            context.log_event(AssetObservation(
                asset_key=context.asset_key, partition=key,
                tags={data_version_tag(): strategy_version(strategy, library)},
                metadata=as_metadata({"kind": strategy.kind, "size": strategy.target, "overlap": strategy.overlap,
                                      "unit": strategy.unit, "splitter": strategy.splitter or "none",
                                      "library": library or "none", "family": strategy.line,
                                      "model": strategy.model or "none"})))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BetaWarning)
            return DataVersionsByPartition({})  # each partition's version was logged with its description above


def strategy_of(key: str):
    """The registered strategy of a partition, or a Failure in one line (a strategies file that went bad, a
    strategy since removed)."""
    try:
        strategies = registered_strategies()
    except StrategyFileError as error:
        raise Failure(str(error)) from None
    if key not in strategies:
        raise Failure(f"strategy {key!r} is not registered (the built-in strategies and RAG_ASSETS_STRATEGIES_FILE's): "
                      f"registered: {', '.join(strategies)}")
    return strategies[key]


@asset(group_name="chunks", partitions_def=strategy_partitions, automation_condition=REBUILD_CHUNKS,
       kinds={"python", "parquet"}, code_version=chunking_code_version(), deps=[chunking_strategy])
def chunks(context: AssetExecutionContext, extracted_text: pa.Table) -> Output[pa.Table]:
    """The chunks of every extracted document under one chunking strategy (ours, or a team's splitter)."""
    strategy = strategy_of(context.partition_key)
    try:
        rows, split = strategy_chunk_rows(extracted_text.to_pylist(), strategy,
                                          models=RegistryModels(registry(current().models_file)))
    except SplitterError as error:
        raise Failure(str(error)) from None
    stats = character_stats([row["content"] for row in rows])
    table = table_from_rows(CHUNKS, rows, "chunks")
    table = table.replace_schema_metadata({UNLOCATED: json.dumps({"count": split.unlocated, "named": split.named})})
    if split.unlocated:
        context.log.warning(f"strategy {strategy.name}: {split.unlocated} chunk(s) the splitter returned could not be "
                            f"located in the canonical text and are not kept (first: {split.named[0]})")
    return versioned_output(
        table, table_version(table),
        metadata={**stats, "mean_characters": round(stats["mean_characters"], 1),
                  "target": strategy.target, "overlap": strategy.overlap, "unit": strategy.unit,
                  "kind": strategy.kind, "boundaries": strategy.boundaries, "header": strategy.header,
                  "unlocated_chunks": split.unlocated,
                  "sample_chunks": preview_table(sample_chunks(rows))},
    )


def unlocated_of(table: pa.Table) -> dict:
    """What the chunks table records as returned by the splitter but not located: {"count", "named"}."""
    raw = (table.schema.metadata or {}).get(UNLOCATED)
    return json.loads(raw) if raw else {"count": 0, "named": []}


@asset(group_name="chunks", partitions_def=strategy_partitions, automation_condition=REBUILD_CHUNK_QUALITY,
       kinds={"python", "parquet"}, code_version=quality_code_version())
def chunk_quality(
    context: AssetExecutionContext, chunks: pa.Table, eval_set: pa.Table, extracted_text: pa.Table
) -> Output[pa.Table]:
    """Per strategy: chunk sizes, the needles no chunk holds whole (answers destroyed), and the chunks a
    splitter returned that could not be located (counted, never judged)."""
    columns = ["chunk_id", "doc_id", "start", "end", "content"]
    unlocated = unlocated_of(chunks)
    row = quality_row(context.partition_key, chunks.select(columns).to_pylist(), eval_set.to_pylist(),
                      extracted_text.to_pylist()) | {"unlocated_chunks": unlocated["count"],
                                                     "unlocated": unlocated["named"]}
    table = table_from_rows(CHUNK_QUALITY, [row], "chunk_quality")
    return versioned_output(
        table, table_version(table),
        metadata={"chunks": row["chunks"], "answers_destroyed": row["answers_destroyed"],
                  "destroyed_needles": MetadataValue.json(row["destroyed_needles"]), "needles": row["needles"],
                  "unlocated_chunks": row["unlocated_chunks"]},
    )
