"""A team's pgvector table and Qdrant collection judged by `rag-assets evaluate` as its retrievers: the same
tables, paired tests and verdict lines as every external retriever, each stamped with the index version its
engine reports; holding our chunks and vectors, each scores exactly what our dense retriever scores."""

from __future__ import annotations

import json
import math

import duckdb
import pytest

from rag_assets_tests.lib.retrieve.test_engine_kinds import MODEL, load_pgvector, load_qdrant, pgvector_bin, tiny_index
from rag_assets_tests.servers import PostgresServer, cli, tiny_home_env

pytestmark = [pytest.mark.integration, pytest.mark.servers]


def test_a_pgvector_table_and_a_qdrant_collection_are_judged_as_our_dense_retriever_is(tmp_path):
    corpus = tiny_index(tmp_path)
    server = PostgresServer(tmp_path / "pg", bin_dir=pgvector_bin())
    try:
        load_pgvector(server.url, corpus)
        load_qdrant(tmp_path / "qdrant", corpus)
        retrievers = tmp_path / "retrievers.json"
        retrievers.write_text(json.dumps([
            {"key": "team_pg", "kind": "pgvector", "url": server.url, "table": "chunks", "model": MODEL},
            {"key": "team_qdrant", "kind": "qdrant", "path": str(tmp_path / "qdrant"), "collection": "team_docs",
             "model": MODEL}]))
        home = tmp_path / "home"
        env = tiny_home_env(home) | {"RAG_ASSETS_RETRIEVERS_FILE": str(retrievers)}
        run = cli(env, "evaluate", "--models", MODEL, "--strategies", "boundaries")
        assert run.returncode == 0, run.stderr[-3000:]
        report = cli(env, "report", "--by", "model,strategy,retriever")
    finally:
        server.stop()
    assert "team_pg" in report.stdout and "team_qdrant" in report.stdout, report.stdout[-3000:]
    rows = len(corpus["chunks"])
    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        stamps = dict(connection.execute("SELECT DISTINCT strategy, revision FROM latest_results "
                                         "WHERE model = 'external'").fetchall())
        measures = "mrr, success_at_1, success_at_4, ndcg_at_10"
        figures = {tuple(row[:3]): row[3:] for row in connection.execute(
            f"SELECT strategy, retriever, phrasing, {measures} FROM metrics WHERE model IN ('external', ?)",
            [MODEL]).fetchall()}
        paired = {row[0] for row in connection.execute(
            "SELECT a_strategy FROM comparisons WHERE model = 'external'").fetchall()}
    assert stamps["team_pg"] == f"rows {rows}, max id {rows}"
    assert stamps["team_qdrant"].startswith(f"points {rows}, configuration ")
    for phrasing in ("doc", "ticket"):  # the same figures as our dense retriever over the same chunks, phrasing by phrasing
        ours = figures[("boundaries", "dense", phrasing)]
        for key in ("team_pg", "team_qdrant"):
            assert all(math.isclose(a, b, abs_tol=1e-12) for a, b in zip(figures[(key, key, phrasing)], ours)), key
    assert paired == {"team_pg", "team_qdrant"}  # each paired with the built-in configurations, as any external one
