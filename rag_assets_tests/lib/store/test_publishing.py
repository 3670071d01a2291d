"""Evaluation runs published to the team's database: real SQLite, PostgreSQL and MariaDB servers, the same
rows in each, idempotent by run id, a run that failed half-way written whole by the next publish; and the
queries of docs/outputs.md giving DuckDB's figures to 1e-12 on every engine, with both ways to get MRR wrong
(a miss dropped by AVG, integer division) shown engine by engine."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.measures import write_results
from rag_assets.lib.store.publishing import PublishError, engine_url, publish
from rag_assets_tests.servers import MariaDBServer, PostgresServer

pytestmark = [pytest.mark.servers]

DOCS = Path(__file__).resolve().parents[3] / "docs" / "outputs.md"
SCHEMA = pa.schema([("query_id", pa.string()), ("needle_id", pa.string()), ("query_kind", pa.string()),
                    ("hit_rank", pa.int64()), ("relevant_ranks", pa.list_(pa.int64())), ("relevant_total", pa.int64()),
                    ("phrasing", pa.string()), ("retriever", pa.string()), ("model", pa.string()),
                    ("revision", pa.string()), ("strategy", pa.string()), ("latency_ms", pa.float64()),
                    ("snapshot_id", pa.string()), ("pipeline_version", pa.string()),
                    ("chunk_ids", pa.list_(pa.string())), ("context_tokens", pa.list_(pa.int64()))])


PER_QUERY = "per configuration: hits in the top 3 and MRR over queries, a miss counted as 0"
PER_NEEDLE = "per configuration over needles: each needle's mean over its phrasings, then the mean over needles"
DROPPED = "wrong: a miss is dropped from the mean (inflated)"
INTEGER = "wrong: integer division, a different figure in each engine"


def documented_queries() -> dict[str, str]:
    """The SQL blocks of docs/outputs.md, by their first comment line."""
    blocks = re.findall(r"```sql\n(.*?)```", DOCS.read_text(), re.DOTALL)
    return {block.splitlines()[0].removeprefix("-- "): block for block in blocks}


def evaluation(seed: int) -> pa.Table:
    """An evaluation's rows: 3 configurations x 12 needles x 2 phrasings (about a third missed, ranks 1-25),
    and 4 out-of-domain queries each; a question and a document in Japanese."""
    rng = random.Random(seed)
    rows = []
    for model, strategy, retriever in (("m1", "s1", "dense"), ("m1", "s2", "bm25"), ("m2", "s1", "hybrid")):
        for needle in range(12):
            for phrasing in ("doc", "ticket"):
                rank = rng.choice([None, None, 1, 1, 2, 3, 4, 7, 11, 25])
                rows.append({"query_id": f"n{needle}:{phrasing}", "needle_id": f"n{needle}", "query_kind": "needle",
                             "hit_rank": rank, "relevant_ranks": [rank] if rank else [], "relevant_total": 1,
                             "phrasing": phrasing, "retriever": retriever, "model": model, "revision": "r1",
                             "strategy": strategy, "latency_ms": rng.random() * 9, "snapshot_id": "snap",
                             "pipeline_version": "4", "chunk_ids": [f"c{i}" for i in range(3)],
                             "context_tokens": [90, 180, 270]})
        for query in range(4):
            rows.append(rows[-1] | {"query_id": f"o{query}", "needle_id": None, "query_kind": "out_of_domain",
                                    "hit_rank": None, "relevant_ranks": [], "phrasing": "out_of_domain",
                                    "chunk_ids": ["設定ファイル"]})
    return pa.Table.from_pylist(rows, schema=SCHEMA)


@pytest.fixture(scope="module")
def metrics_file(tmp_path_factory) -> tuple[Path, list[str]]:
    database = tmp_path_factory.mktemp("published") / "metrics.duckdb"
    with duckdb.connect(str(database)) as connection:
        runs = [write_results(connection, evaluation(seed), {"run_id": f"run-{seed}", "settings": {"seed": seed}})
                for seed in (1, 2)]
    return database, runs


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    """A URL of each engine: SQLite (a file), a real PostgreSQL and a real MariaDB server."""
    folder = tmp_path_factory.mktemp("engines")
    postgres, mariadb = PostgresServer(folder / "pg"), MariaDBServer(folder / "mariadb")
    yield {"sqlite": f"sqlite:///{folder / 'team.db'}", "postgresql": postgres.url, "mariadb": mariadb.url}
    postgres.stop()
    mariadb.stop()


def rows_of(url: str, sql: str, **parameters) -> list[tuple]:
    import sqlalchemy as sa

    engine = sa.create_engine(engine_url(url))
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(sa.text(sql), parameters)]
    finally:
        engine.dispose()


def by_configuration(rows) -> dict[tuple, tuple[float, ...]]:
    return {tuple(row[:3]): tuple(float(value) for value in row[3:]) for row in rows}


def close(found: dict, expected: dict, tolerance: float = 1e-12) -> bool:
    return found.keys() == expected.keys() and all(
        math.isclose(a, b, rel_tol=0, abs_tol=tolerance) for key in expected for a, b in zip(found[key], expected[key]))


def test_every_run_is_published_once_and_every_engine_gives_duckdbs_figures(metrics_file, engines):
    database, runs = metrics_file
    queries = documented_queries()
    assert set(queries) == {PER_QUERY, PER_NEEDLE, DROPPED, INTEGER}
    with duckdb.connect(str(database), read_only=True) as duck:
        def in_duckdb(sql: str) -> dict:
            local = sql.replace("rag_retrieval_results", "retrieval_results").replace(":run", "$run")
            return by_configuration(duck.execute(local, {"run": runs[1]}).fetchall())
        expected = {name: in_duckdb(sql) for name, sql in queries.items()}
        stored_mrr = {(model, strategy, retriever, phrasing): mrr for model, strategy, retriever, phrasing, mrr in duck.execute(
            "SELECT model, strategy, retriever, phrasing, mrr FROM metrics_history WHERE run_id = ?", [runs[1]]).fetchall()}
    for engine, url in engines.items():
        first = publish(database, url)
        assert first.runs == runs and first.rows["retrieval_results"] == 2 * 3 * (24 + 4), engine
        again = publish(database, url)  # idempotent by run id
        assert (again.runs, again.already) == ([], 2), engine
        assert rows_of(url, "SELECT count(*), count(hit_rank), count(DISTINCT run_id) FROM rag_retrieval_results")[0] == (
            168, sum(1 for row in evaluation(1).to_pylist() + evaluation(2).to_pylist() if row["hit_rank"]), 2)
        found = {name: by_configuration(rows_of(url, sql, run=runs[1])) for name, sql in queries.items()}
        assert close(found[PER_QUERY], expected[PER_QUERY]) and close(found[PER_NEEDLE], expected[PER_NEEDLE]), engine
        published_mrr = {tuple(row[:4]): float(row[4]) for row in rows_of(
            url, "SELECT model, strategy, retriever, phrasing, mrr FROM rag_metrics WHERE run_id = :run", run=runs[1])}
        assert published_mrr.keys() == stored_mrr.keys() and all(
            math.isclose(published_mrr[key], stored_mrr[key], abs_tol=1e-12) for key in stored_mrr), engine
        # the per-needle query over one phrasing is that phrasing's stored MRR
        doc_only = by_configuration(rows_of(url, queries[PER_NEEDLE].replace("query_kind <> 'out_of_domain'",
                                                                    "query_kind <> 'out_of_domain' AND phrasing = 'doc'"),
                                            run=runs[1]))
        assert all(math.isclose(doc_only[key][1], stored_mrr[(*key, "doc")], abs_tol=1e-12) for key in doc_only), engine

        wrong, right = found[DROPPED], found[PER_QUERY]  # every engine skips NULL in AVG: the same inflated figure
        assert close(wrong, expected[DROPPED]) and all(wrong[key][0] > right[key][1] for key in right), engine
        integer = found[INTEGER]
        if engine in ("sqlite", "postgresql"):  # 1 / 3 is 0: only the hits at rank 1 count
            ones = by_configuration(rows_of(url, "SELECT model, strategy, retriever, AVG(CASE WHEN hit_rank = 1 THEN "
                                            "1.0E0 ELSE 0.0E0 END) FROM rag_retrieval_results WHERE run_id = :run AND "
                                            "query_kind <> 'out_of_domain' GROUP BY model, strategy, retriever",
                                            run=runs[1]))
            assert close(integer, ones), engine
        else:  # MariaDB: four decimals, off by more than 1e-12 but less than 1e-4
            assert not close(integer, {key: (value[1],) for key, value in right.items()})
            assert close(integer, {key: (value[1],) for key, value in right.items()}, tolerance=1e-4), engine
    assert close(expected[INTEGER], {key: (value[1],) for key, value in expected[PER_QUERY].items()})  # DuckDB: exact


def test_a_run_that_failed_half_way_is_written_whole_by_the_next_publish(metrics_file, tmp_path):
    database, runs = metrics_file
    url = f"sqlite:///{tmp_path / 'team.db'}"
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.begin() as connection:  # a table of the right name that cannot take the rows: the run fails whole
        connection.execute(sa.text("CREATE TABLE rag_metrics (run_id TEXT NOT NULL, model TEXT NOT NULL CHECK (0))"))
    with pytest.raises(PublishError, match=r"publishing to sqlite:///.*CHECK constraint failed"):
        publish(database, url)
    assert rows_of(url, "SELECT count(*) FROM rag_retrieval_results")[0] == (0,)  # rolled back with its run
    with engine.begin() as connection:
        connection.execute(sa.text("DROP TABLE rag_metrics"))
    engine.dispose()
    assert publish(database, url).runs == runs
    assert rows_of(url, "SELECT count(*) FROM rag_retrieval_results")[0] == (168,)


def test_an_unreachable_database_is_named_without_its_password(metrics_file, tmp_path):
    database, _ = metrics_file
    from rag_assets_tests.servers import free_port

    with pytest.raises(PublishError, match=r"postgresql://rag:\*\*\*@127\.0\.0\.1:\d+/x: .*(refused|connect)"):
        publish(database, f"postgresql://rag:secret@127.0.0.1:{free_port()}/x")
    with pytest.raises(PublishError, match="publish.url nowhere://x"):
        publish(database, "nowhere://x")
