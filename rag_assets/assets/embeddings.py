import time

import numpy as np
import pyarrow as pa
from dagster import AssetExecutionContext, Output, asset

from rag_assets.lib.chunk_report import token_stats
from rag_assets.lib.chunking import header_of_text
from rag_assets.partitions import model_strategy_partitions
from rag_assets.resources import EmbeddingModels

BATCH = 64


@asset(group_name="embeddings", partitions_def=model_strategy_partitions)
def embeddings(context: AssetExecutionContext, models: EmbeddingModels, chunks: pa.Table) -> Output[pa.Table]:
    """One L2-normalised float32 vector per chunk, stamped with the model and its weights' revision.

    Also the tokens each chunk costs with this model's tokenizer, and how many of them are header.
    """
    keys = context.partition_key.keys_by_dimension
    model = models.get(keys["model"])
    texts = chunks.column("text").to_pylist()
    headers = [header_of_text(text, span_from, end) for text, span_from, end in
               zip(texts, chunks.column("span_from").to_pylist(), chunks.column("to").to_pylist())]
    tokens = model.count_tokens(texts)
    header_tokens = [count if header else 0 for header, count in zip(headers, model.count_tokens(headers))]
    started = time.perf_counter()
    parts = []
    for offset in range(0, len(texts), BATCH):
        parts.append(model.embed(texts[offset : offset + BATCH]))
        context.log.info(f"embedded {min(offset + BATCH, len(texts))}/{len(texts)} chunks")
    vectors = np.concatenate(parts) if parts else np.zeros((0, model.dimension), dtype=np.float32)
    seconds = time.perf_counter() - started
    table = pa.table(
        {
            "chunk_id": chunks.column("chunk_id"),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), model.dimension),
            "tokens": pa.array(tokens, pa.int64()),
            "header_tokens": pa.array(header_tokens, pa.int64()),
            # the encoder silently drops what lies past its window
            "truncated": pa.array([count + model.special_tokens > model.window for count in tokens], pa.bool_()),
        }
    )
    stamp = {"model": model.key, "revision": model.revision, "dimension": model.dimension,
             "strategy": keys["strategy"], "snapshot_id": chunks.column("snapshot_id")[0].as_py() if len(chunks) else None}
    for name, value in stamp.items():
        table = table.append_column(name, pa.array([value] * table.num_rows))
    stats = token_stats(tokens, header_tokens, model.special_tokens, model.window)
    return Output(
        table,
        metadata={"chunks": table.num_rows, "revision": model.revision, "seconds": round(seconds, 2),
                  "chunks_per_second": round(table.num_rows / seconds, 1) if seconds else 0.0,
                  **stats, "header_token_share": round(stats["header_token_share"], 4)},
    )
