import numpy as np
import pyarrow as pa
from dagster import AssetExecutionContext, Output, asset

from rag_assets.lib.evalset import NEEDLE, chunks_by_document, queries_from_rows, span_holders
from rag_assets.lib.retrieval import judge, run_dense
from rag_assets.partitions import model_strategy_partitions
from rag_assets.resources import EmbeddingModels, RagSettings

QUERY_COLUMNS = ["query_id", "needle_id", "phrasing", "query_kind", "kind"]


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
    """Every query of the evaluation set against one model x strategy index: top k and where the answer landed."""
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
    queries = queries_from_rows(eval_set.to_pylist())
    documents = {r["doc_id"]: r["text"] for r in extracted_text.to_pylist() if r["status"] == "ok"}
    chunk_rows = chunks.select(["chunk_id", "doc_id", "span_from", "to"]).to_pylist()
    by_doc = chunks_by_document(chunk_rows)
    chunk_doc = {row["chunk_id"]: row["doc_id"] for row in chunk_rows}
    holders = {q.query_id: span_holders(q.spans, by_doc, documents) for q in queries if q.query_kind == NEEDLE}
    vectors = np.asarray(embeddings.column("vector").combine_chunks().flatten().to_numpy(), dtype=np.float32)
    runs = run_dense(queries, model.embed, embeddings.column("chunk_id").to_pylist(),
                     vectors.reshape(len(embeddings), model.dimension), settings.top_k)
    by_id = {row["query_id"]: row for row in eval_set.select(QUERY_COLUMNS).to_pylist()}
    stamp = {"model": model.key, "revision": model.revision, "strategy": keys["strategy"],
             "snapshot_id": embeddings.column("snapshot_id")[0].as_py() if len(embeddings) else None}
    rows = [
        by_id[query.query_id] | run | judge(query, run["chunk_ids"], holders.get(query.query_id, set()), chunk_doc)
        | stamp
        for query, run in zip(queries, runs)
    ]
    judged = [row for row in rows if row["query_kind"] != "out_of_domain"]
    return Output(
        pa.Table.from_pylist(rows),
        metadata={"queries": len(rows), "judged_queries": len(judged),
                  f"hits_in_top_{settings.top_k}": sum(row["hit_rank"] is not None for row in judged),
                  "out_of_domain_queries": len(rows) - len(judged)},
    )
