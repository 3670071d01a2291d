import duckdb
import pyarrow as pa
from dagster import MaterializeResult, MetadataValue, asset

from rag_assets.lib.metrics import comparison, format_table, write_results
from rag_assets.resources import RagSettings

RESULT_COLUMNS = ["query_id", "needle_id", "phrasing", "retriever", "model", "revision", "strategy",
                  "snapshot_id", "hit_rank", "latency_ms"]


@asset(group_name="metrics", pool="duckdb_write")
def retrieval_metrics(settings: RagSettings, retrieval_runs: pa.Table) -> MaterializeResult:
    """recall@k and MRR per model, strategy and retriever, in DuckDB; one writer at a time."""
    settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(settings.duckdb_path)) as connection:
        write_results(connection, retrieval_runs.select(RESULT_COLUMNS))
        table = comparison(connection)
    return MaterializeResult(
        metadata={
            "duckdb": MetadataValue.path(str(settings.duckdb_path)),
            "rows": retrieval_runs.num_rows,
            "comparison": MetadataValue.md(format_table(table)),
        }
    )
