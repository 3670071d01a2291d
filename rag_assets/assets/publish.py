"""The evaluation published where the team's data lives (``publish.url``): every run of ``metrics.duckdb``
that the team's database does not hold yet (``lib/store/publishing.py``)."""

from dagster import AssetExecutionContext, Failure, MaterializeResult, MetadataValue, asset

from rag_assets.automation import PUBLISH
from rag_assets.environment import inherited
from rag_assets.lib.store.publishing import PublishError, describe, publish
from rag_assets.lib.store.stamps import PIPELINE_VERSION
from rag_assets.lib.store.team_database import TeamDatabaseError, variables_of, with_variables
from rag_assets.resources import RagSettings
from rag_assets.tags import DUCKDB_WRITE_POOL

NOT_SET = "no publish.url: the evaluation is in metrics.duckdb only"


@asset(group_name="metrics", deps=["retrieval_metrics"], pool=DUCKDB_WRITE_POOL, automation_condition=PUBLISH,
       kinds={"python", "sql"}, code_version=PIPELINE_VERSION)
def published_evaluation(context: AssetExecutionContext, settings: RagSettings) -> MaterializeResult:
    """Every evaluation run of metrics.duckdb written to the team's PostgreSQL, SQLite or MySQL database
    (publish.url): the run, its per-query rows (hit rank NULL for a miss), the measures with their intervals,
    the paired tests, the verdict and the refusal cuts. Idempotent by run id; when the database cannot take
    them this asset fails with the reason, the evaluation stays as it is, and the next run writes every run
    still missing."""
    if not settings.publish.url:
        return MaterializeResult(metadata={"published": NOT_SET})
    try:
        url = settings.publish.url
        published = publish(settings.duckdb_path, with_variables(url, inherited(variables_of(url))),
                            settings.publish.table_prefix)
    except (PublishError, TeamDatabaseError) as error:
        raise Failure(description=f"{error}; the evaluation itself is in metrics.duckdb, and the next `rag-assets "
                      "evaluate` (or a materialisation of published_evaluation) writes every run still missing") from None
    context.log.info(describe(published))
    return MaterializeResult(metadata={"published": describe(published), "target": published.target,
                                       "runs_written": MetadataValue.json(published.runs),
                                       "rows_written": MetadataValue.json(published.rows)})
