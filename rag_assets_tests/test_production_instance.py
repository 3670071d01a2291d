"""The same graph on a production Dagster instance: a real PostgreSQL server (Debian's postgresql,
started here by initdb and pg_ctl, stopped by its PID), selected by DAGSTER_PG_URL, with the queued
run coordinator; runs and materialisations read back from PostgreSQL itself."""

import subprocess
import sys

import psycopg2
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance, DagsterRunStatus, RunsFilter

from rag_assets.definitions import COMMAND_TAG
from rag_assets_tests.servers import PROJECT, PostgresServer, tiny_home_env


def test_the_whole_graph_runs_on_a_postgres_instance_with_queued_runs(tmp_path, monkeypatch):
    server = PostgresServer(tmp_path / "postgres")
    try:
        home = tmp_path / "home"
        # the driver named: SQLAlchemy 2.1 would pick psycopg 3 for a bare postgresql:// (dagster-postgres ships psycopg2)
        pg_url = server.url.replace("postgresql://", "postgresql+psycopg2://")
        env = tiny_home_env(home) | {"DAGSTER_PG_URL": pg_url, "RAG_ASSETS_MAX_RUNS": "2"}
        evaluate = [sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", "wordllama", "--strategies",
                    "boundaries", "blind"]
        first = subprocess.run(evaluate, env=env, cwd=PROJECT, capture_output=True, text=True, timeout=900)
        assert first.returncode == 0, first.stderr[-3000:]

        config = (home / "dagster" / "dagster.yaml").read_text()
        assert "postgres_url:\n      env: DAGSTER_PG_URL" in config and "max_concurrent_runs: 2" in config
        assert not (home / "dagster" / "history").exists()  # nothing went to SQLite

        # PostgreSQL itself holds the runs and the materialisations
        with psycopg2.connect(server.url) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT status, count(*) FROM runs GROUP BY status")
            statuses = dict(cursor.fetchall())
            cursor.execute("SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION' "
                           "AND asset_key = %s", (AssetKey("retrieval_runs").to_string(),))
            [(retrieval_materialisations,)] = cursor.fetchall()
        assert set(statuses) == {"SUCCESS"} and statuses["SUCCESS"] >= 6  # observe, inputs, 2 chunking, 2 models...
        assert retrieval_materialisations == 2  # wordllama x boundaries, wordllama x blind

        monkeypatch.setenv("DAGSTER_PG_URL", pg_url)
        with DagsterInstance.from_config(str(home / "dagster")) as instance:
            assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
            concurrency = instance.get_concurrency_config()  # what the daemon's run queue reads
            assert concurrency.run_queue_config.max_concurrent_runs == 2
            assert concurrency.pool_config.default_pool_limit == 1  # one DuckDB writer
            runs = instance.get_runs(RunsFilter(tags={COMMAND_TAG: "evaluate"}))
            assert len(runs) == statuses["SUCCESS"] and all(r.status == DagsterRunStatus.SUCCESS for r in runs)
            partitions = {r.partition_key for r in instance.fetch_materializations(
                AssetRecordsFilter(asset_key=AssetKey("embeddings")), limit=10).records}
            assert partitions == {"wordllama|boundaries", "wordllama|blind"}

        # Dagster's stale status, read from PostgreSQL, lets a second evaluation skip what is current
        second = subprocess.run(evaluate, env=env, cwd=PROJECT, capture_output=True, text=True, timeout=900)
        assert second.returncode == 0, second.stderr[-3000:]
        assert "up to date: model_partition [wordllama x boundaries]" in second.stdout
    finally:
        server.stop()
