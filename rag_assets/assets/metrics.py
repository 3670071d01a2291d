"""The metrics stage: every materialised partition appended to DuckDB as an evaluation run, the report,
the stamp check and the regression alarm."""

from pathlib import Path

import pyarrow as pa
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetIn,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from rag_assets.asset_support import markdown_table, preview_table, snapshot_of
from rag_assets.automation import EVALUATE
from rag_assets.lib.embed.models import RegistryModels, registry
from rag_assets.lib.evaluate.misses import worst_queries_of_pick
from rag_assets.lib.evaluate.page import page_address, write_page
from rag_assets.lib.evaluate.regressions import latest_regressions
from rag_assets.lib.evaluate.report import Report, build_report, headline, plots_markdown
from rag_assets.lib.evaluate.results_store import Evaluation, record_evaluation, withdraw_run
from rag_assets.lib.evaluate.size_view import strategy_rows
from rag_assets.lib.ingest.splitters import SplitterError, library_version
from rag_assets.lib.retrieve.engine import model_free
from rag_assets.lib.retrieve.external import registry as external_registry
from rag_assets.lib.store.database import read_only
from rag_assets.lib.store.paths import stored_database
from rag_assets.lib.store.schemas import STAMP_FIELDS
from rag_assets.lib.store.stamps import PIPELINE_VERSION, stamp_problems
from rag_assets.partitions import external_partitions, registered_strategies
from rag_assets.resources import EmbeddingModels, RagSettings
from rag_assets.settings import current
from rag_assets.tags import DUCKDB_WRITE_POOL


def stamp_rule(models: EmbeddingModels, corpus_snapshot: pa.Table):
    """What every configuration's stamps must agree with: the installed weights and this snapshot. The
    evaluation checks them before it writes anything, so a mixed build never becomes the latest result."""
    expected = snapshot_of(corpus_snapshot)
    return lambda stamps: stamp_problems(stamps, models.installed_revisions(stamps), expected=expected,
                                         model_free=model_free())


def external_keys(settings: RagSettings, instance=None) -> tuple[list[str], list[str]]:
    """(the external retrievers the settings' retrievers file registers whose partitions are evaluated, a
    warning line for each left out): with ``instance``, one whose latest ``external_runs`` run failed (Dagster's
    status of its partition) is left out, not evaluated on what an earlier run found."""
    keys = list(external_registry(settings.retrievers_file))
    if not keys or instance is None:
        return keys, []
    from dagster import AssetKey, AssetPartitionStatus

    status = instance.get_status_by_partition(AssetKey("external_runs"), keys, external_partitions) or {}
    failed = [key for key in keys if status.get(key) == AssetPartitionStatus.FAILED]
    return [key for key in keys if key not in failed], [
        f"left out: external retriever {key}: its latest external_runs run failed (its errors are in that run); it "
        "is evaluated again once it answers" for key in failed]


# the observed inputs are direct dependencies too: a changed corpus or model shows the metrics stale, and the
# nightly run observes them before it evaluates
@asset(group_name="metrics", pool=DUCKDB_WRITE_POOL, automation_condition=EVALUATE, kinds={"python", "duckdb"},
       code_version=PIPELINE_VERSION,
       deps=["corpus_folder", "embedding_model", "retrieval_runs", "lexical_runs", "refusal_calibration", "embeddings",
             "chunk_quality", "external_runs"])
def retrieval_metrics(
    context: AssetExecutionContext, settings: RagSettings, models: EmbeddingModels, corpus_snapshot: pa.Table
) -> MaterializeResult:
    """success@k, success at each context budget, recall@k, precision@k, MRR and nDCG@10 with intervals over
    needles, the decision at the budget and its family of adjusted paired tests, and each strategy's costs,
    in DuckDB.

    Reads every materialised partition of its inputs from Parquet (read_parquet) and appends them as a
    new evaluation run (history is kept); writes the evaluation page (report/index.html: the decision,
    budget curves, two configurations or two runs side by side, why a query missed) and the report
    (Markdown and PNG plots) beside the file.
    """
    external, left_out = external_keys(settings, context.instance)
    try:
        evaluation = record_evaluation(settings.duckdb_path, Path(settings.home), context.run.run_id,
                                       stamp_rule(models, corpus_snapshot), models.registered(),
                                       external, settings.decision_rule(),
                                       settings.retrievers or None, run_settings(settings, models) | (
                                           {"external_left_out": left_out} if left_out else {}),
                                       strategy_definitions())
        for warning in [*left_out, *evaluation.warnings]:
            context.log.warning(warning)
        report = build_report(evaluation.table, evaluation.paired, evaluation.costs, evaluation.configurations,
                              Path(settings.home) / "report", evaluation.cuts, evaluation.ranking, evaluation.rule,
                              evaluation.verdict)
        page = write_page(settings.duckdb_path, Path(settings.home))
        missed = worst_queries_of_pick(settings.duckdb_path, Path(settings.home), evaluation.configurations,
                                       evaluation.ranking)
    except BaseException:  # stopped (SIGTERM, Ctrl-C) or failed after the file was renamed into place: the run
        for line in withdraw_run(settings.duckdb_path, Path(settings.home), context.run.run_id):  # is not a success,
            context.log.warning(line)  # so its evaluation must not stay the current one
        raise
    return MaterializeResult(metadata=metrics_metadata(evaluation, report, settings.duckdb_path, missed, page))


def strategy_definitions() -> list[dict]:
    """Every registered strategy's definition and splitter library version (the ``strategies`` table: the size
    view's families, sizes and overlaps)."""
    strategies = registered_strategies()
    libraries = {}
    for name, strategy in strategies.items():
        try:
            libraries[name] = library_version(strategy, RegistryModels(registry(current().models_file)))
        except SplitterError:  # not installed: its partitions failed alone, and it has no rows to describe
            libraries[name] = ""
    return strategy_rows(strategies, libraries)


def run_settings(settings: RagSettings, models: EmbeddingModels) -> dict:
    """What an evaluation run was asked to do, kept with the run (``evaluation_runs.settings``), so that the
    evaluation page can say what changed between two runs."""
    rule = settings.decision_rule()
    return {"corpus": settings.corpus_dir, "eval_set": settings.eval_set, "out_of_domain": settings.out_of_domain,
            "registered_models": sorted(models.registered()), "retrievers": list(settings.retrievers) or "all",
            "top_k": settings.top_k, "cross_encoder": settings.cross_encoder or None,
            "bm25": settings.bm25_config().model_dump(), "hnsw": settings.hnsw_config().model_dump(),
            "decision": {"budget": rule.budget, "budgets": list(rule.all_budgets), "adjustment": rule.adjustment,
                         "margin": rule.margin}}


def metrics_metadata(evaluation: Evaluation, report: Report, database: Path, missed: list[dict],
                     page: Path | None = None) -> dict:
    """The metrics asset's metadata: the decision and the evaluation page first, then the verdict, the pick's
    figures (which Dagster plots over time on the asset's page), the tables, the plots and where the files are."""
    _verdict, comparison, comparisons, chunk_stats, *refusal = report.sections.values()
    return {
        "decision": MetadataValue.md(evaluation.decision),
        # served by `rag-assets ui` (runner/report_server.py): an http address a click in the UI opens, naming no
        # folder, so a copied or moved storage folder's UI opens its own page
        **({"evaluation_page": MetadataValue.url(page_address(current().report_port))} if page else {}),
        "verdict": MetadataValue.md(f"```\n{evaluation.verdict}\n```"),
        **headline(evaluation.table, evaluation.ranking, evaluation.rule),
        "duckdb": MetadataValue.path(str(database)),
        "evaluation_run": evaluation.run_id,
        "rows": evaluation.rows,
        "configurations": MetadataValue.json([f"{m} x {s}" for m, s in evaluation.configurations]),
        "comparison": markdown_table(comparison),
        "comparisons": markdown_table(comparisons),
        "chunk_stats": markdown_table(chunk_stats),
        **({"suggested_cuts": markdown_table(refusal[0])} if refusal else {}),
        "plots": MetadataValue.md(plots_markdown(report)),
        **({"worst_queries": preview_table(missed)} if missed else {}),
        "report": MetadataValue.path(str(report.path)),
    }


@asset_check(asset=retrieval_metrics, blocking=True, additional_ins={"corpus_snapshot": AssetIn()},
             description="Every configuration of the newest run was built from the same snapshot, pipeline and current weights.")
def metrics_stamps_agree(settings: RagSettings, models: EmbeddingModels, corpus_snapshot: pa.Table) -> AssetCheckResult:
    with read_only(stored_database(Path(settings.home))) as connection:
        stamps = connection.sql(
            f"SELECT DISTINCT {', '.join(STAMP_FIELDS)} FROM latest_results ORDER BY ALL").to_arrow_table().to_pylist()
    problems = stamp_rule(models, corpus_snapshot)(stamps)
    return AssetCheckResult(
        passed=not problems, severity=AssetCheckSeverity.ERROR,
        description="\n".join(problems) or f"{len(stamps)} configurations, one consistent build",
        metadata={"configurations": len(stamps), "problems": MetadataValue.json(problems)},
    )


@asset_check(asset=retrieval_metrics,
             description="Regression alarm: each configuration's newest run against the previous one on the same "
             "queries (sign test on success@k, Wilcoxon on reciprocal rank); fails on a drop with p < 0.05, "
             "warns when the evaluation set changed between the two runs.")
def no_significant_regression(settings: RagSettings) -> AssetCheckResult:
    with read_only(stored_database(Path(settings.home))) as connection:
        report = latest_regressions(connection)
    return AssetCheckResult(
        passed=not report.drops and not report.evaluation_set_changed,
        severity=AssetCheckSeverity.WARN if report.evaluation_set_changed else AssetCheckSeverity.ERROR,
        description=report.summary(),
        metadata={"newer_run": report.newer_run or "", "older_run": report.older_run or "",
                  "configurations_compared": report.configurations,
                  "drops": MetadataValue.json([drop.describe() for drop in report.drops])},
    )
