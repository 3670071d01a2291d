import numpy as np
import pyarrow as pa
from dagster import AssetExecutionContext, Output, asset

from rag_assets.lib.evalset import Needle, Query, needle_holders
from rag_assets.lib.retrieval import run_dense
from rag_assets.partitions import model_strategy_partitions
from rag_assets.resources import EmbeddingModels, RagSettings


@asset(group_name="retrieval", partitions_def=model_strategy_partitions)
def retrieval_runs(
    context: AssetExecutionContext,
    settings: RagSettings,
    models: EmbeddingModels,
    eval_set: pa.Table,
    extracted_text: pa.Table,
    chunks: pa.Table,
    embeddings: pa.Table,
) -> Output[pa.Table]:
    """Every query of the evaluation set against one model x strategy index: top k and hit rank."""
    keys = context.partition_key.keys_by_dimension
    model = models.get(keys["model"])
    index_revision = embeddings.column("revision")[0].as_py() if len(embeddings) else model.revision
    if index_revision != model.revision:
        raise ValueError(
            f"index of {keys['model']} was built with weights {index_revision}, the model loaded now is "
            f"{model.revision}: re-materialise embeddings for {context.partition_key}"
        )
    if embeddings.column("chunk_id").to_pylist() != chunks.column("chunk_id").to_pylist():
        raise ValueError(f"embeddings {context.partition_key} do not match the current chunks: re-materialise them")
    queries_rows = eval_set.to_pylist()
    needles = {r["needle_id"]: Needle(r["needle_id"], r["doc_id"], r["needle"], {}) for r in queries_rows}
    documents = {r["doc_id"]: r["text"] for r in extracted_text.to_pylist() if r["status"] == "ok"}
    holders = needle_holders(needles.values(), chunks.select(["chunk_id", "doc_id", "span_from", "to"]).to_pylist(), documents)
    queries = [Query(r["query_id"], r["needle_id"], r["phrasing"], r["question"]) for r in queries_rows]
    vectors = np.asarray(embeddings.column("vector").combine_chunks().flatten().to_numpy(), dtype=np.float32)
    rows = run_dense(
        queries, model.embed, embeddings.column("chunk_id").to_pylist(),
        vectors.reshape(len(embeddings), model.dimension), holders, settings.top_k,
    )
    stamp = {"model": model.key, "revision": model.revision, "strategy": keys["strategy"],
             "snapshot_id": embeddings.column("snapshot_id")[0].as_py() if len(embeddings) else None}
    table = pa.Table.from_pylist([row | stamp for row in rows])
    hits = sum(row["hit_rank"] is not None for row in rows)
    return Output(
        table,
        metadata={"queries": len(rows), f"hits_in_top_{settings.top_k}": hits,
                  "answers_destroyed": sum(1 for needle_id in needles if not holders[needle_id])},
    )
