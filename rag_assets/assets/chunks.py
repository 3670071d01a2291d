import pyarrow as pa
from dagster import AssetExecutionContext, Output, asset

from rag_assets.lib.chunking import STRATEGIES, chunk_document
from rag_assets.lib.extraction import sections_from_rows
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
            rows.append(chunk.to_row() | {"snapshot_id": document["snapshot_id"]})
    sizes = [len(row["content"]) for row in rows]
    return Output(
        pa.Table.from_pylist(rows),
        metadata={
            "chunks": len(rows),
            "mean_characters": round(sum(sizes) / len(sizes), 1) if sizes else 0.0,
            "max_characters": max(sizes, default=0),
        },
    )
