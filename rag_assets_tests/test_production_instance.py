"""The same graph on a production Dagster instance: a real PostgreSQL server (Debian's postgresql,
started here by initdb and pg_ctl, stopped by its PID), selected by DAGSTER_PG_URL, with the queued
run coordinator; runs and materialisations read back from PostgreSQL itself. Then a backfill launched
as the UI launches one and run by the daemon: two partitions at once on the multiprocess executor,
every row arriving."""

import subprocess
import sys
import time

import psycopg2
import pyarrow.parquet as pq
import pytest
from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    DagsterRunStatus,
    RunsFilter,
)

from rag_assets.lib.store import paths
from rag_assets.tags import COMMAND_TAG
from rag_assets_tests.servers import (
    PROJECT,
    DagsterDev,
    PostgresServer,
    graphql,
    tiny_home_env,
)

pytestmark = [pytest.mark.integration, pytest.mark.servers]

LAUNCH_BACKFILL = """mutation($params: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $params) {
  __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }"""
BACKFILL_STATUS = """query($id: String!) {
  partitionBackfillOrError(backfillId: $id) { ... on PartitionBackfill { status } } }"""
PARTITIONS = ["wordllama|boundaries", "wordllama|blind"]


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
            assert type(instance.run_coordinator).__name__ == "RagRunCoordinator"
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

        _backfill_runs_two_partitions_at_once(home, env, tmp_path, monkeypatch)
    finally:
        server.stop()


def _backfill_runs_two_partitions_at_once(home, env, tmp_path, monkeypatch) -> None:
    """Both partitions backfilled from the webserver; the daemon runs them, two at once."""
    built = {key: paths.partition_path(home, "retrieval_runs", [("model", "wordllama"), ("strategy", key.split("|")[1])])
             for key in PARTITIONS}
    before = {key: path.stat().st_mtime_ns for key, path in built.items()}
    dev = DagsterDev(env | {"RAG_ASSETS_EXECUTOR": "multiprocess", "RAG_ASSETS_AUTOMATION": "stopped"},
                     tmp_path / "dagster-dev.log")
    try:
        dev.wait_until_up()
        launched = graphql(dev.url, LAUNCH_BACKFILL, {"params": {
            "partitionNames": PARTITIONS, "assetSelection": [{"path": [name]} for name in (
                "embeddings", "retrieval_runs", "refusal_calibration")]}})["launchPartitionBackfill"]
        assert launched["__typename"] == "LaunchBackfillSuccess", launched
        deadline, status = time.monotonic() + 600, "REQUESTED"
        while status == "REQUESTED" and time.monotonic() < deadline:
            time.sleep(3)
            status = graphql(dev.url, BACKFILL_STATUS, {"id": launched["backfillId"]})["partitionBackfillOrError"]["status"]
    finally:
        dev.stop()
    log = (tmp_path / "dagster-dev.log").read_text(errors="replace")
    assert status == "COMPLETED_SUCCESS", f"the backfill ended {status}\n{log[-4000:]}"

    monkeypatch.setenv("DAGSTER_PG_URL", env["DAGSTER_PG_URL"])
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        runs = instance.get_runs(RunsFilter(tags={"dagster/backfill": launched["backfillId"]}))
        assert all(run.status == DagsterRunStatus.SUCCESS for run in runs)
        windows = {run.tags.get("dagster/partition"): instance.get_run_record_by_id(run.run_id) for run in runs}
        assert set(windows) == set(PARTITIONS)  # one run per partition
        first, second = (windows[key] for key in PARTITIONS)
        assert max(first.start_time, second.start_time) < min(first.end_time, second.end_time)  # at once
        for run in runs:  # each run's steps in processes of their own
            engine = [entry.message for entry in instance.all_logs(run.run_id, of_type=DagsterEventType.ENGINE_EVENT)]
            assert any("multiprocess executor" in message for message in engine), engine
    # every row of both partitions arrived, rewritten by the backfill: 8 queries x the 4 retrievers that use the model
    # (BM25 is in lexical_runs, once per strategy)
    for key, path in built.items():
        assert path.stat().st_mtime_ns > before[key] and pq.read_metadata(path).num_rows == 32, key
