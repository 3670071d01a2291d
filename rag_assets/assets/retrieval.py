import numpy as np
import pyarrow as pa
from dagster import (
    AssetCheckExecutionContext, AssetCheckResult, AssetCheckSeverity, AssetExecutionContext, AssetIn, MetadataValue,
    Output, asset, asset_check,
)

from rag_assets.asset_support import partition_tables
from rag_assets.lib.embedding import MODELS
from rag_assets.lib.evalset import NEEDLE, chunks_by_document, queries_from_rows, span_holders
from rag_assets.lib.extraction import canonical_texts
from rag_assets.lib.judging import judge
from rag_assets.lib.retrievers import Index, available, cross_encoder, run_retrievers
from rag_assets.lib.stamps import STAMP_FIELDS, stamp_problems
from rag_assets.partitions import model_strategy_partitions
from rag_assets.resources import EmbeddingModels, RagSettings

QUERY_COLUMNS = ["query_id", "needle_id", "phrasing", "query_kind", "kind", "eval_version", "eval_hash"]


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
    documents = canonical_texts(extracted_text.to_pylist())
    chunk_rows = chunks.select(["chunk_id", "doc_id", "span_start", "end"]).to_pylist()
    by_doc = chunks_by_document(chunk_rows)
    chunk_doc = {row["chunk_id"]: row["doc_id"] for row in chunk_rows}
    holders = {q.query_id: span_holders(q.spans, by_doc, documents) for q in queries if q.query_kind == NEEDLE}
    vectors = np.asarray(embeddings.column("vector").combine_chunks().flatten().to_numpy(), dtype=np.float32)
    index = Index(chunk_ids=embeddings.column("chunk_id").to_pylist(), texts=chunks.column("text").to_pylist(),
                  vectors=vectors.reshape(len(embeddings), model.dimension), embedder=model,
                  cross_encoder=cross_encoder.load(settings.cross_encoder) if settings.cross_encoder else None)
    ran = available(index, settings.retrievers)
    runs = run_retrievers(queries, index, settings.top_k, ran)
    by_query = {q.query_id: q for q in queries}
    by_id = {row["query_id"]: row for row in eval_set.select(QUERY_COLUMNS).to_pylist()}
    stamp = {field: embeddings.column(field)[0].as_py() if len(embeddings) else None for field in STAMP_FIELDS}
    rows = [
        by_id[run["query_id"]] | run
        | judge(by_query[run["query_id"]], run["chunk_ids"], holders.get(run["query_id"], set()), chunk_doc) | stamp
        for run in runs
    ]
    skipped = {name: "no cross encoder configured (settings.cross_encoder)" if name == "cross_encoder"
               else "not available" for name in settings.retrievers if name not in ran}
    judged = [row for row in rows if row["query_kind"] != "out_of_domain"]
    summary = {
        name: {"hits": sum(r["hit_rank"] is not None for r in judged if r["retriever"] == name),
               "mean_latency_ms": round(float(np.mean([r["latency_ms"] for r in rows if r["retriever"] == name])), 3)}
        for name in ran
    }
    return Output(
        _table(rows),
        metadata={"queries": len(queries), "retrievers": MetadataValue.json(ran),
                  "retrievers_skipped": MetadataValue.json(skipped),
                  "judged_queries": len(judged) // max(len(ran), 1),
                  f"hits_in_top_{settings.top_k}": MetadataValue.json(summary)},
    )


# columns that may be all null in one partition (no hit, no dense run, no needle) keep their type
_TYPES = {"needle_id": pa.string(), "kind": pa.string(), "hit_rank": pa.int64(), "relevant_ranks": pa.list_(pa.int64()),
          "distances": pa.list_(pa.float64()), "scores": pa.list_(pa.float64()), "chunk_ids": pa.list_(pa.string())}


def _table(rows: list[dict]) -> pa.Table:
    table = pa.Table.from_pylist(rows)
    for name, kind in _TYPES.items():
        if name in table.column_names:
            table = table.set_column(table.schema.get_field_index(name), name, table.column(name).cast(kind))
    return table


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
