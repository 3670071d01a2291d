import duckdb
import pyarrow as pa
from dagster import MaterializeResult, MetadataValue, asset

from rag_assets.lib.metrics import comparison, format_chunk_stats, format_table, write_chunk_stats, write_results
from rag_assets.resources import RagSettings

RESULT_COLUMNS = ["query_id", "needle_id", "phrasing", "query_kind", "kind", "retriever", "model", "revision",
                  "strategy", "snapshot_id", "hit_rank", "relevant_ranks", "relevant_total", "latency_ms"]
TOKEN_COLUMNS = ["model", "strategy", "tokens", "header_tokens", "truncated"]


@asset(group_name="metrics", pool="duckdb_write")
def retrieval_metrics(
    settings: RagSettings, retrieval_runs: pa.Table, embeddings: pa.Table, chunk_quality: pa.Table
) -> MaterializeResult:
    """recall@k and MRR per model, strategy and retriever, and what each strategy costs, in DuckDB."""
    settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(settings.duckdb_path)) as connection:
        write_results(connection, retrieval_runs.select(RESULT_COLUMNS))
        write_chunk_stats(connection, embeddings.select(TOKEN_COLUMNS), chunk_quality)
        table = comparison(connection)
        costs = connection.sql("SELECT * FROM chunk_stats").to_arrow_table()
    return MaterializeResult(
        metadata={
            "duckdb": MetadataValue.path(str(settings.duckdb_path)),
            "rows": retrieval_runs.num_rows,
            "comparison": MetadataValue.md(format_table(table)),
            "chunk_stats": MetadataValue.md(format_chunk_stats(costs)),
        }
    )
