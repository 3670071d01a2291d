import pyarrow as pa
from dagster import AssetExecutionContext, MetadataValue, Output, asset

from rag_assets.lib.chunk_report import answers_destroyed, character_stats
from rag_assets.lib.chunking import STRATEGIES, chunk_document
from rag_assets.lib.evalset import needle_holders, needles_from_rows
from rag_assets.lib.extraction import canonical_texts, sections_from_rows
from rag_assets.partitions import strategy_partitions


@asset(group_name="chunks", partitions_def=strategy_partitions, metadata={"partition_dimension": "strategy"})
def chunks(context: AssetExecutionContext, extracted_text: pa.Table) -> Output[pa.Table]:
    """The chunks of every extracted document under one chunking strategy."""
    strategy = STRATEGIES[context.partition_key]
    rows = []
    for document in extracted_text.to_pylist():
        if document["status"] != "ok":
            continue
        for chunk in chunk_document(
            document["doc_id"], document["title"], document["text"],
            sections_from_rows(document["sections"]), strategy,
        ):
            rows.append(chunk.to_row() | {"snapshot_id": document["snapshot_id"],
                                          "extractor_version": document["extractor_version"]})
    stats = character_stats([row["content"] for row in rows])
    return Output(
        pa.Table.from_pylist(rows),
        metadata={**stats, "mean_characters": round(stats["mean_characters"], 1),
                  "target": strategy.target, "overlap": strategy.overlap,
                  "boundaries": strategy.boundaries, "header": strategy.header},
    )


@asset(group_name="chunks", partitions_def=strategy_partitions, metadata={"partition_dimension": "strategy"})
def chunk_quality(
    context: AssetExecutionContext, chunks: pa.Table, eval_set: pa.Table, extracted_text: pa.Table
) -> Output[pa.Table]:
    """Per strategy: chunk sizes, and the needles no chunk holds whole (answers destroyed)."""
    needles = needles_from_rows(eval_set.to_pylist())
    documents = canonical_texts(extracted_text.to_pylist())
    holders = needle_holders(needles, chunks.select(["chunk_id", "doc_id", "span_start", "end"]).to_pylist(), documents)
    destroyed = answers_destroyed(holders)
    row = {"strategy": context.partition_key, **character_stats(chunks.column("content").to_pylist()),
           "needles": len(needles), "answers_destroyed": len(destroyed), "destroyed_needles": destroyed}
    return Output(
        pa.Table.from_pylist([row], schema=pa.schema([
            ("strategy", pa.string()), ("chunks", pa.int64()), ("mean_characters", pa.float64()),
            ("max_characters", pa.int64()), ("needles", pa.int64()), ("answers_destroyed", pa.int64()),
            ("destroyed_needles", pa.list_(pa.string())),
        ])),
        metadata={"chunks": row["chunks"], "answers_destroyed": len(destroyed),
                  "destroyed_needles": MetadataValue.json(destroyed), "needles": len(needles)},
    )
