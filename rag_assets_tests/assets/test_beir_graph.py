"""A BEIR-layout benchmark through the graph: document-level judgements and evidence spans."""

import duckdb
import pytest
from dagster import DagsterInstance

from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import materialize_all
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration


def test_beir_folder_runs_end_to_end_with_document_and_evidence_queries(tmp_path, tiny_corpus):
    beir = tiny_corpus.parent / "beir_tiny"
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(beir), eval_set=str(beir), out_of_domain="")
    materialize_all(settings, DagsterInstance.ephemeral(), models=FakeEmbeddingModels(),
                    model_keys=["all-MiniLM-L6-v2"], strategies=["boundaries"], progress=lambda _: None)
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as connection:
        rows = connection.sql(
            "SELECT query_id, query_kind, phrasing, hit_rank, relevant_total FROM retrieval_results "
            "WHERE retriever = 'dense' ORDER BY query_id"
        ).fetchall()
        metrics = connection.sql("SELECT phrasing, queries FROM metrics WHERE retriever = 'hybrid' "
                                 "ORDER BY phrasing").fetchall()
        retrievers = connection.sql("SELECT DISTINCT retriever FROM retrieval_results ORDER BY 1").fetchall()
    # no cross encoder is configured: its rows are absent
    assert retrievers == [("ann",), ("bm25",), ("dense",), ("hybrid",), ("late_interaction",)]
    # four documents, so every relevant document or evidence chunk is somewhere in the top 25
    assert [(q, kind, phrasing, total) for q, kind, phrasing, _, total in rows] == [
        ("q1", "document", "query", 1), ("q1:evidence", "needle", "evidence", 1),
        ("q2", "document", "query", 1), ("q3", "document", "query", 2), ("q3:evidence", "needle", "evidence", 2)]
    assert all(rank is not None and rank <= 4 for *_, rank, _ in rows)
    assert metrics == [("evidence", 2), ("query", 3)]
