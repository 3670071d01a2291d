import numpy as np
import pyarrow as pa
from dagster import (
    AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity, AssetExecutionContext, AssetIn, MetadataValue,
    Output, asset, asset_check,
)

from rag_assets.assets.partition_files import partition_tables
from rag_assets.lib.embedding import MODELS
from rag_assets.lib.evalset import NEEDLE, chunks_by_document, queries_from_rows, span_holders
from rag_assets.lib.retrieval import judge, run_dense
from rag_assets.lib.stamps import STAMP_FIELDS, stamp_problems
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
    runs = run_dense(queries, model.embed_queries, embeddings.column("chunk_id").to_pylist(),
                     vectors.reshape(len(embeddings), model.dimension), settings.top_k)
    by_id = {row["query_id"]: row for row in eval_set.select(QUERY_COLUMNS).to_pylist()}
    stamp = {field: embeddings.column(field)[0].as_py() if len(embeddings) else None for field in STAMP_FIELDS}
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


@asset_check(asset=retrieval_runs, blocking=True, additional_ins={"corpus_snapshot": AssetIn()},
             description="Retrieval rows and their index carry one stamp, matching the registry and the corpus snapshot.")
def retrieval_stamps_agree(
    context: AssetCheckExecutionContext, settings: RagSettings, models: EmbeddingModels, corpus_snapshot: pa.Table
) -> AssetCheckResult:
    stamps = []
    for asset_name in ("retrieval_runs", "embeddings"):
        for _, table in partition_tables(context, settings.home, asset_name):
            stamps += table.select(list(STAMP_FIELDS)).group_by(list(STAMP_FIELDS)).aggregate([]).to_pylist()
    unique = [dict(t) for t in {tuple(sorted(s.items())) for s in stamps}]
    revisions = {key: models.installed_revision(key) for key in MODELS if key in {s["model"] for s in unique}}
    snapshot = corpus_snapshot.column("snapshot_id")[0].as_py() if len(corpus_snapshot) else None
    problems = stamp_problems(unique, revisions, expected={"snapshot_id": snapshot})
    return AssetCheckResult(
        passed=not problems, severity=AssetCheckSeverity.ERROR,
        description="\n".join(problems) or "one build: stamps match each other, the registry and the corpus snapshot",
        metadata={"stamps": MetadataValue.json(sorted(unique, key=str))},
    )
