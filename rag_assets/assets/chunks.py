"""The chunks stage: one partition per chunking strategy, and what each strategy costs in answers."""

import pyarrow as pa
from dagster import AssetExecutionContext, MetadataValue, Output, asset

from rag_assets.asset_support import preview_table, table_version, versioned_output
from rag_assets.automation import REBUILD_CHUNK_QUALITY, REBUILD_CHUNKS
from rag_assets.lib.evaluate.chunk_quality import quality_code_version, quality_row
from rag_assets.lib.ingest.chunking import STRATEGIES, character_stats, chunk_rows, chunking_code_version
from rag_assets.lib.ingest.samples import sample_chunks
from rag_assets.lib.store.schemas import CHUNK_QUALITY, CHUNKS, table_from_rows
from rag_assets.partitions import strategy_partitions


@asset(group_name="chunks", partitions_def=strategy_partitions, automation_condition=REBUILD_CHUNKS,
       kinds={"python", "parquet"}, code_version=chunking_code_version())
def chunks(context: AssetExecutionContext, extracted_text: pa.Table) -> Output[pa.Table]:
    """The chunks of every extracted document under one chunking strategy."""
    strategy = STRATEGIES[context.partition_key]
    rows = chunk_rows(extracted_text.to_pylist(), strategy)
    stats = character_stats([row["content"] for row in rows])
    table = table_from_rows(CHUNKS, rows, "chunks")
    return versioned_output(
        table, table_version(table),
        metadata={**stats, "mean_characters": round(stats["mean_characters"], 1),
                  "target": strategy.target, "overlap": strategy.overlap,
                  "boundaries": strategy.boundaries, "header": strategy.header,
                  "sample_chunks": preview_table(sample_chunks(rows))},
    )


@asset(group_name="chunks", partitions_def=strategy_partitions, automation_condition=REBUILD_CHUNK_QUALITY,
       kinds={"python", "parquet"}, code_version=quality_code_version())
def chunk_quality(
    context: AssetExecutionContext, chunks: pa.Table, eval_set: pa.Table, extracted_text: pa.Table
) -> Output[pa.Table]:
    """Per strategy: chunk sizes, and the needles no chunk holds whole (answers destroyed)."""
    columns = ["chunk_id", "doc_id", "start", "end", "content"]
    row = quality_row(context.partition_key, chunks.select(columns).to_pylist(), eval_set.to_pylist(),
                      extracted_text.to_pylist())
    table = table_from_rows(CHUNK_QUALITY, [row], "chunk_quality")
    return versioned_output(
        table, table_version(table),
        metadata={"chunks": row["chunks"], "answers_destroyed": row["answers_destroyed"],
                  "destroyed_needles": MetadataValue.json(row["destroyed_needles"]), "needles": row["needles"]},
    )
