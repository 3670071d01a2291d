from pathlib import Path

import duckdb
import pyarrow as pa
from dagster import (
    AssetCheckResult, AssetCheckSeverity, AssetExecutionContext, AssetIn, MaterializeResult, MetadataValue, asset,
    asset_check,
)

from rag_assets.lib.embedding import MODELS
from rag_assets.lib.metrics import comparison, format_chunk_stats, format_table, write_chunk_stats, write_results
from rag_assets.lib.paths import partition_files
from rag_assets.lib.stamps import STAMP_FIELDS, stamp_problems
from rag_assets.resources import EmbeddingModels, RagSettings

RESULT_COLUMNS = ["query_id", "needle_id", "phrasing", "query_kind", "kind", "retriever", *STAMP_FIELDS,
                  "hit_rank", "relevant_ranks", "relevant_total", "latency_ms"]
TOKEN_COLUMNS = ["model", "strategy", "tokens", "header_tokens", "truncated"]


def _read(connection: duckdb.DuckDBPyConnection, files: list[Path], columns: list[str]):
    if not files:
        raise FileNotFoundError("no partition has been materialised yet")
    return connection.read_parquet([str(f) for f in files], union_by_name=True).select(*columns).to_arrow_table()


@asset(group_name="metrics", pool="duckdb_write", deps=["retrieval_runs", "embeddings", "chunk_quality"])
def retrieval_metrics(context: AssetExecutionContext, settings: RagSettings) -> MaterializeResult:
    """recall@k and MRR per model, strategy and retriever, and what each strategy costs, in DuckDB.

    Reads every materialised partition of its inputs from Parquet (read_parquet): the comparison
    covers whatever model x strategy pairs have been run, and its metadata says which.
    """
    home = Path(settings.home)
    settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(settings.duckdb_path)) as connection:
        runs = _read(connection, partition_files(home, "retrieval_runs"), RESULT_COLUMNS)
        write_results(connection, runs)
        write_chunk_stats(connection, _read(connection, partition_files(home, "embeddings"), TOKEN_COLUMNS),
                          _read(connection, partition_files(home, "chunk_quality"), ["*"]))
        table = comparison(connection)
        costs = connection.sql("SELECT * FROM chunk_stats").to_arrow_table()
        pairs = connection.sql("SELECT DISTINCT model, strategy FROM retrieval_results ORDER BY ALL").fetchall()
    return MaterializeResult(
        metadata={
            "duckdb": MetadataValue.path(str(settings.duckdb_path)),
            "rows": runs.num_rows,
            "configurations": MetadataValue.json([f"{model} x {strategy}" for model, strategy in pairs]),
            "comparison": MetadataValue.md(format_table(table)),
            "chunk_stats": MetadataValue.md(format_chunk_stats(costs)),
        }
    )


@asset_check(asset=retrieval_metrics, blocking=True, additional_ins={"corpus_snapshot": AssetIn()},
             description="Every configuration in DuckDB was built from the same snapshot, pipeline and current weights.")
def metrics_stamps_agree(settings: RagSettings, models: EmbeddingModels, corpus_snapshot: pa.Table) -> AssetCheckResult:
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as connection:
        stamps = connection.sql(
            f"SELECT DISTINCT {', '.join(STAMP_FIELDS)} FROM retrieval_results ORDER BY ALL").to_arrow_table().to_pylist()
    revisions = {key: models.installed_revision(key) for key in MODELS if key in {r["model"] for r in stamps}}
    snapshot = corpus_snapshot.column("snapshot_id")[0].as_py() if len(corpus_snapshot) else None
    problems = stamp_problems(stamps, revisions, expected={"snapshot_id": snapshot})
    return AssetCheckResult(
        passed=not problems, severity=AssetCheckSeverity.ERROR,
        description="\n".join(problems) or f"{len(stamps)} configurations, one consistent build",
        metadata={"configurations": len(stamps), "problems": MetadataValue.json(problems)},
    )
