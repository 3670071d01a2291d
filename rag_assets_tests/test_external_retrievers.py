"""A team's own retriever in the graph: registered in a file, asked every query by `rag-assets evaluate`
through a real HTTP service, in the same tables and paired tests as the built-in configurations, and
re-evaluated alone when the service reports a new index version."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from rag_assets_tests.servers import RetrievalService, tiny_home_env

pytestmark = [pytest.mark.integration, pytest.mark.servers]

PROJECT = Path(__file__).resolve().parents[1]
WORDLLAMA = ["--models", "wordllama", "--strategies", "boundaries"]


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rag_assets.cli", *args], env=env, cwd=PROJECT, capture_output=True,
                          text=True, timeout=600)  # a guard against a hang, not a speed limit


def test_the_teams_retriever_is_evaluated_beside_the_built_in_configurations(tmp_path):
    home = tmp_path / "home"
    service = RetrievalService(tmp_path / "uvicorn.log", version="v1")
    try:
        registry = tmp_path / "retrievers.json"
        registry.write_text(json.dumps([{"key": "prod", "kind": "http", "url": f"{service.url}/search",
                                         "headers": {"Authorization": "PROD_TOKEN"},
                                         "index_version_url": f"{service.url}/version"}]))
        env = tiny_home_env(home) | {"RAG_ASSETS_RETRIEVERS_FILE": str(registry),
                                     "PROD_TOKEN": f"Bearer {service.token}"}
        first = cli(env, "evaluate", *WORDLLAMA)
        assert first.returncode == 0, first.stderr[-3000:]
        assert "running external_partition [external prod]" in first.stdout
        with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
            configurations = connection.sql("SELECT DISTINCT model, strategy, retriever FROM metrics").fetchall()
            compared = connection.sql("SELECT comparison, measure, needles, b_model FROM comparisons "
                                      "WHERE model = 'external'").fetchall()
            [pick] = connection.sql("SELECT model, strategy, retriever FROM decision").fetchall()
            stored = connection.sql("SELECT * FROM evaluation_runs").to_arrow_table().to_pylist()
        assert ("external", "prod", "prod") in configurations and ("wordllama", "boundaries", "dense") in configurations
        # the team's retriever against the verdict's pick, at the decision's budget, on the same needles
        assert [(label, measure, model) for label, measure, _, model in compared] == [
            ("prod vs pick", "success_at_1024_tokens", pick[0])]
        assert pick[1] == "boundaries" and compared[0][2] == 3  # three needles, six queries
        assert service.token not in json.dumps(stored, default=str)
        report = cli(env, "report", "--paired")
        assert report.returncode == 0 and "| external | prod | prod |" in report.stdout
        assert f"| external | prod vs pick | external: prod x prod | {pick[0]}: boundaries x {pick[2]} |" in report.stdout
        # nothing changed: nothing is asked again
        again = cli(env, "evaluate", *WORDLLAMA)
        assert "up to date: external_partition [external prod]" in again.stdout, again.stdout[-2000:]
    finally:
        service.stop()
    # the service re-indexed: its partition alone is evaluated again
    service = RetrievalService(tmp_path / "uvicorn2.log", version="v2", token="s3cret-token")
    try:
        registry.write_text(json.dumps([{"key": "prod", "kind": "http", "url": f"{service.url}/search",
                                         "headers": {"Authorization": "PROD_TOKEN"},
                                         "index_version_url": f"{service.url}/version"}]))
        reindexed = cli(env, "evaluate", *WORDLLAMA)
        assert reindexed.returncode == 0, reindexed.stderr[-3000:]
        assert "running external_partition [external prod]" in reindexed.stdout
        assert "up to date: model_partition [wordllama x boundaries]" in reindexed.stdout
        with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
            revisions = connection.sql("SELECT DISTINCT revision FROM latest_results WHERE model = 'external'").fetchall()
        assert revisions == [("v2",)], reindexed.stdout[:3000]
    finally:
        service.stop()


def test_a_vector_database_retriever_is_calibrated_for_refusal_like_the_built_in_ones(tmp_path):
    import chromadb

    from rag_assets.lib.embed.models import load_model
    from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_rows
    from rag_assets.lib.ingest.corpus import scan_corpus
    from rag_assets.lib.ingest.documents import extract_file
    from rag_assets_tests.conftest import FIXTURES
    from rag_assets_tests.servers import ChromaServer

    corpus = FIXTURES / "tiny_corpus"
    rows = [extract_file(corpus, e.path, e.format, e.sha256, 10**7) | {"snapshot_id": "s", "extractor_version": "2"}
            for e in scan_corpus(corpus, {})]
    chunks = chunk_rows(rows, STRATEGIES["boundaries"])
    vectors = load_model("wordllama").embed([c["text"] for c in chunks])
    server = ChromaServer(tmp_path)
    try:
        collection = chromadb.HttpClient(host="127.0.0.1", port=server.port).create_collection(
            "team_docs", metadata={"hnsw:space": "cosine"})
        collection.add(ids=[c["chunk_id"] for c in chunks], embeddings=vectors.tolist(),
                       documents=[c["content"] for c in chunks], metadatas=[{"doc_id": c["doc_id"]} for c in chunks])
        registry = tmp_path / "retrievers.json"
        registry.write_text(json.dumps([{"key": "chroma_docs", "kind": "chroma", "host": "127.0.0.1",
                                         "port": server.port, "collection": "team_docs", "model": "wordllama"}]))
        home = tmp_path / "home"
        env = tiny_home_env(home) | {"RAG_ASSETS_RETRIEVERS_FILE": str(registry)}
        result = cli(env, "evaluate", *WORDLLAMA)
        assert result.returncode == 0, result.stderr[-3000:]
        with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
            cuts = connection.sql("SELECT model, strategy, retriever, cut FROM suggested_cuts").fetchall()
            dense = dict(connection.sql("SELECT query_id, hit_rank FROM latest_results WHERE retriever = 'dense'"
                                        ).fetchall())
            chroma = dict(connection.sql("SELECT query_id, hit_rank FROM latest_results WHERE retriever = 'chroma_docs'"
                                         ).fetchall())
        assert any(model == "external" and retriever == "chroma_docs" for model, _, retriever, _ in cuts), cuts
        assert chroma == dense  # the same chunks and vectors: the same ranks as our dense retriever
        # the store is re-indexed (one chunk changed): its partition alone is asked again
        rewritten = "A chunk rewritten by a re-index of the store."
        collection.update(ids=[chunks[0]["chunk_id"]], documents=[rewritten],
                          embeddings=load_model("wordllama").embed([rewritten]).tolist())
        again = cli(env, "evaluate", *WORDLLAMA)
        assert again.returncode == 0, again.stderr[-3000:]
        assert "running external_partition [external chroma_docs]" in again.stdout
        assert "up to date: model_partition [wordllama x boundaries]" in again.stdout
    finally:
        server.stop()


TEAM_STORES = '''
def blind(query, k):
    """Distances, and never a passage holding a needle."""
    return [{"text": f"Nothing about it, answer {i}.", "distance": 0.1 * (i + 1)} for i in range(k)]


def verbatim(query, k):
    """The tiny corpus's first paragraph for every question."""
    return [{"text": "Python is a programming language.", "doc_id": "tiny.md", "distance": 0.5}]
'''


def test_a_retriever_that_never_finds_a_needle_is_its_own_row_and_two_external_retrievers_report(tmp_path):
    (tmp_path / "team_stores.py").write_text(TEAM_STORES)
    registry = tmp_path / "retrievers.json"
    registry.write_text(json.dumps([{"key": "blind", "kind": "python", "target": "team_stores:blind"},
                                    {"key": "verbatim", "kind": "python", "target": "team_stores:verbatim"}]))
    home = tmp_path / "home"
    env = tiny_home_env(home) | {"RAG_ASSETS_RETRIEVERS_FILE": str(registry), "PYTHONPATH": str(tmp_path)}
    result = cli(env, "evaluate", *WORDLLAMA)
    assert result.returncode == 0, result.stderr[-3000:]
    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        configurations = connection.sql("SELECT DISTINCT model, retriever FROM latest_results").fetchall()
        blind = connection.sql("SELECT count(*), count(hit_rank) FROM latest_results WHERE retriever = 'blind'"
                               ).fetchall()[0]
        revisions = connection.sql("SELECT retriever, revision FROM latest_results WHERE model = 'external' "
                                   "GROUP BY ALL ORDER BY ALL").fetchall()
    assert {("wordllama", "dense"), ("external", "blind"), ("external", "verbatim")} <= set(configurations)
    assert blind[0] > 0 and blind[1] == 0  # every query asked, none answered with its needle
    assert revisions[0][1] != revisions[1][1]  # each retriever's index version is its own
    report = cli(env, "report", "--paired")
    assert report.returncode == 0, report.stderr[-3000:]
    assert "mixes builds" not in report.stderr
    assert "| external | blind | blind | no needle found |" in report.stdout, report.stdout[-3000:]


STUCK_STORES = '''
import time


def stuck(query, k):
    """A store that never answers in time: every query, and every probe of its index version, times out."""
    time.sleep(30)
    return []
'''


def test_a_retriever_that_only_times_out_fails_alone_and_the_others_are_evaluated_and_exported(tmp_path):
    """One failing external retriever never stops the evaluation: its partition fails (in Dagster's status), the
    others' metrics are written, its failure is said with its errors by kind and an example, and it is left out of
    the metrics until it answers again; `export` writes every configuration, a team's by where its passages lie."""
    (tmp_path / "team_stores.py").write_text(TEAM_STORES)
    (tmp_path / "stuck_stores.py").write_text(STUCK_STORES)
    registry = tmp_path / "retrievers.json"
    registry.write_text(json.dumps([{"key": "verbatim", "kind": "python", "target": "team_stores:verbatim"},
                                    {"key": "stuck", "kind": "python", "target": "stuck_stores:stuck"}]))
    home = tmp_path / "home"
    env = tiny_home_env(home) | {"RAG_ASSETS_RETRIEVERS_FILE": str(registry), "PYTHONPATH": str(tmp_path),
                                 "RAG_ASSETS_EXTERNAL_DEADLINE_SECONDS": "1"}
    result = cli(env, "evaluate", *WORDLLAMA)
    assert result.returncode == 0, result.stderr[-3000:]
    said = result.stdout + result.stderr
    assert "Traceback" not in said
    assert "warning: external_partition [external stuck] failed" in said, said[-3000:]
    assert "retriever 'stuck' failed" in said and "x no answer within the 1-second deadline of a query" in said
    assert "for example query" in said
    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        retrievers = {row[0] for row in connection.sql("SELECT DISTINCT retriever FROM latest_results").fetchall()}
    assert "verbatim" in retrievers and "dense" in retrievers and "stuck" not in retrievers
    assert "left out: external retriever stuck" in said, said[-3000:]

    exported = cli(env, "export", "--format", "trec", str(tmp_path / "trec"))
    assert exported.returncode == 0, exported.stderr[-3000:]
    run = (tmp_path / "trec" / "external__verbatim__verbatim.run").read_text().splitlines()
    assert run and all(line.split()[2].startswith(("tiny.md", "verbatim:unlocated:")) or "#char=" in line.split()[2]
                       for line in run)
    assert (tmp_path / "trec" / "wordllama__boundaries__dense.run").exists()
