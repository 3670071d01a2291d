"""`rag-assets evaluate` with publish.url: a database that cannot be reached is said in one line (its password
hidden) and the evaluation succeeds; the next `evaluate`, with nothing else to do, writes the run; the verdict's
MRR is what the documented per-needle query gives on the published rows. `ask`'s traces go there too."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest

from rag_assets_tests.lib.store.test_publishing import PER_NEEDLE, documented_queries
from rag_assets_tests.servers import WORDLLAMA, cli, free_port, tiny_home_env

pytestmark = [pytest.mark.integration]

QUESTION = "How do I remove limescale from a kettle with vinegar?"  # answered by the tiny corpus


def test_a_failed_publish_never_fails_the_evaluation_and_the_next_evaluate_writes_the_run(tmp_path):
    home = tmp_path / "home"
    unreachable = {"RAG_ASSETS_PUBLISH_URL": f"postgresql://rag:${{TEAM_DB_PASSWORD}}@127.0.0.1:{free_port()}/team",
                   "TEAM_DB_PASSWORD": "s3cret-word"}
    first = cli(tiny_home_env(home) | unreachable, "evaluate", *WORDLLAMA)
    assert first.returncode == 0, first.stderr[-3000:]
    said = first.stdout + first.stderr
    assert "warning: publish_evaluation failed" in said and "postgresql://rag:***@127.0.0.1" in said, said[-3000:]
    assert "s3cret-word" not in said and "the next `rag-assets evaluate`" in said

    team = tmp_path / "team.db"
    env = tiny_home_env(home) | {"RAG_ASSETS_PUBLISH_URL": f"sqlite:///{team}"}
    second = cli(env, "evaluate", *WORDLLAMA)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "up to date: evaluation_metrics" in second.stdout  # nothing evaluated again: only the run published
    assert f"published 1 evaluation run(s) to sqlite:///{team}" in second.stdout, second.stdout[-3000:]
    with sqlite3.connect(team) as connection:
        [run] = connection.execute("SELECT run_id FROM rag_evaluation_runs").fetchall()
        ranking = {tuple(row[:3]): row[3] for row in connection.execute(
            "SELECT model, strategy, retriever, mrr FROM rag_ranking WHERE run_id = ?", run)}
        needles = {tuple(row[:3]): row[4] for row in connection.execute(
            documented_queries()[PER_NEEDLE].replace(":run", "?"), run)}
        assert connection.execute("SELECT count(*) FROM rag_comparisons").fetchone()[0] > 0
    assert ranking and all(math.isclose(ranking[key], needles[key], abs_tol=1e-12) for key in ranking)
    third = cli(env, "evaluate", *WORDLLAMA)
    assert third.returncode == 0 and "nothing new (1 runs already there)" in third.stdout, third.stdout[-3000:]

    # ask's traces, in the lesson's shape, beside traces.duckdb; one the database missed is written by the next ask
    (tmp_path / "answer.txt").write_text("Use vinegar [1].")
    missed = cli(tiny_home_env(home) | unreachable, "ask", QUESTION)
    assert missed.returncode in (0, 3) and "the next ask writes it there" in missed.stderr, missed.stderr[-2000:]
    assert "s3cret-word" not in missed.stderr
    asked = cli(env, "ask", QUESTION, "--verify", str(tmp_path / "answer.txt"))
    assert asked.returncode in (0, 3) and "warning" not in asked.stderr, asked.stderr[-2000:]
    with sqlite3.connect(team) as connection:
        rows = connection.execute("SELECT question, model, retrieved_ids, sent_ids, cited_ids, latency_ms, asked_at "
                                  "FROM rag_ask_traces ORDER BY asked_at").fetchall()
    assert [row[0] for row in rows] == [QUESTION, QUESTION]  # the missed one too, once
    first_trace, verified = rows
    assert json.loads(verified[2]) and json.loads(verified[4]) == json.loads(verified[3])[:1] and first_trace[4] is None
    assert verified[1] == first_trace[1] and verified[5] > 0
