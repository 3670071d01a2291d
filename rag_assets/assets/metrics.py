from pathlib import Path

import duckdb
import pyarrow as pa
from dagster import (
    AssetCheckResult, AssetCheckSeverity, AssetExecutionContext, AssetIn, MaterializeResult, MetadataValue, asset,
    asset_check,
)

from rag_assets.lib.comparisons import format_comparisons, write_comparisons
from rag_assets.lib.embedding import DEFAULT_MODEL, MODELS
from rag_assets.lib.metrics import comparison, format_chunk_stats, format_table, write_chunk_stats, write_results
from rag_assets.lib.paths import partition_files
from rag_assets.lib.report import inline, recall_curves, retriever_bars, write_report
from rag_assets.lib.stamps import STAMP_FIELDS, stamp_problems
from rag_assets.resources import EmbeddingModels, RagSettings

RESULT_COLUMNS = ["query_id", "needle_id", "phrasing", "query_kind", "kind", "retriever", *STAMP_FIELDS,
                  "eval_version", "eval_hash", "hit_rank", "relevant_ranks", "relevant_total", "chunk_ids", "scores",
                  "distances", "latency_ms", "stage_ms"]
TOKEN_COLUMNS = ["model", "strategy", "tokens", "header_tokens", "truncated"]
REPORT_STRATEGY = "boundaries_header"


def _read(connection: duckdb.DuckDBPyConnection, files: list[Path], columns: list[str]):
    if not files:
        raise FileNotFoundError("no partition has been materialised yet")
    return connection.read_parquet([str(f) for f in files], union_by_name=True).select(*columns).to_arrow_table()


@asset(group_name="metrics", pool="duckdb_write", deps=["retrieval_runs", "embeddings", "chunk_quality"])
def retrieval_metrics(context: AssetExecutionContext, settings: RagSettings) -> MaterializeResult:
    """recall@k, precision@k, MRR and nDCG@10 with intervals, paired tests, and each strategy's costs, in DuckDB.

    Reads every materialised partition of its inputs from Parquet (read_parquet) and appends them as a
    new evaluation run (history is kept); writes the report (Markdown and PNG plots) beside the file.
    """
    home = Path(settings.home)
    settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(settings.duckdb_path)) as connection:
        runs = _read(connection, partition_files(home, "retrieval_runs"), RESULT_COLUMNS)
        first = runs.slice(0, 1).to_pylist()[0] if len(runs) else {}
        run_id = write_results(connection, runs, {"dagster_run_id": context.run.run_id,
                                                  "eval_version": first.get("eval_version"),
                                                  "eval_hash": first.get("eval_hash")})
        write_chunk_stats(connection, _read(connection, partition_files(home, "embeddings"), TOKEN_COLUMNS),
                          _read(connection, partition_files(home, "chunk_quality"), ["*"]))
        table = comparison(connection)
        paired = write_comparisons(connection)
        costs = connection.sql("SELECT * FROM chunk_stats").to_arrow_table()
        pairs = connection.sql("SELECT DISTINCT model, strategy FROM latest_results ORDER BY ALL").fetchall()
    models = sorted({model for model, _ in pairs})
    model = DEFAULT_MODEL if DEFAULT_MODEL in models else models[0]
    strategies = {strategy for _, strategy in pairs}
    strategy = REPORT_STRATEGY if REPORT_STRATEGY in strategies else sorted(strategies)[0]
    images = {"recall_at_k.png": recall_curves(table, model), "retrievers.png": retriever_bars(table, model, strategy)}
    skipped = "" if "cross_encoder" in table.column("retriever").to_pylist() else (
        "\n\nNo cross encoder is configured (`cross_encoder` in the settings): its rows are absent.")
    sections = [("Comparison", format_table(table) + skipped),
                ("Paired tests", format_comparisons(paired, strategy)),
                ("What each strategy costs", format_chunk_stats(costs))]
    report = write_report(home / "report", sections, images)
    return MaterializeResult(
        metadata={
            "duckdb": MetadataValue.path(str(settings.duckdb_path)),
            "evaluation_run": run_id,
            "rows": runs.num_rows,
            "configurations": MetadataValue.json([f"{m} x {s}" for m, s in pairs]),
            "comparison": MetadataValue.md(sections[0][1]),
            "comparisons": MetadataValue.md(sections[1][1]),
            "chunk_stats": MetadataValue.md(sections[2][1]),
            "plots": MetadataValue.md(inline(images["recall_at_k.png"], "recall@k") + "\n\n"
                                      + inline(images["retrievers.png"], "retrievers")),
            "report": MetadataValue.path(str(report)),
        }
    )


@asset_check(asset=retrieval_metrics, blocking=True, additional_ins={"corpus_snapshot": AssetIn()},
             description="Every configuration of the newest run was built from the same snapshot, pipeline and current weights.")
def metrics_stamps_agree(settings: RagSettings, models: EmbeddingModels, corpus_snapshot: pa.Table) -> AssetCheckResult:
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as connection:
        stamps = connection.sql(
            f"SELECT DISTINCT {', '.join(STAMP_FIELDS)} FROM latest_results ORDER BY ALL").to_arrow_table().to_pylist()
    revisions = {key: models.installed_revision(key) for key in MODELS if key in {r["model"] for r in stamps}}
    snapshot = corpus_snapshot.column("snapshot_id")[0].as_py() if len(corpus_snapshot) else None
    problems = stamp_problems(stamps, revisions, expected={"snapshot_id": snapshot})
    return AssetCheckResult(
        passed=not problems, severity=AssetCheckSeverity.ERROR,
        description="\n".join(problems) or f"{len(stamps)} configurations, one consistent build",
        metadata={"configurations": len(stamps), "problems": MetadataValue.json(problems)},
    )
