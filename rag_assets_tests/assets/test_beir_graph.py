"""A BEIR-layout benchmark through the graph: document-level judgements and evidence spans, on 30 pages of
several chunks each, with its judging done again here from the folder's own files and checked against ours
through ir_measures."""

import csv
import json
from pathlib import Path

import duckdb
import ir_measures
import pyarrow.parquet as pq
import pytest
from dagster import DagsterInstance
from ir_measures import RR, P, Qrel, R, ScoredDoc, Success, nDCG

from rag_assets.lib.evaluate.measures import comparison
from rag_assets.lib.store import paths
from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import materialize_all
from rag_assets_tests.conftest import FIXTURES
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration

BEIR = FIXTURES / "beir_small"
STRATEGIES = ["boundaries", "document"]
K = (1, 4, 8, 20)


@pytest.fixture(scope="module")
def beir_home(tmp_path_factory):
    settings = RagSettings(home=str(tmp_path_factory.mktemp("beir") / "home"), corpus_dir=str(BEIR),
                           eval_set=str(BEIR), out_of_domain="")
    materialize_all(settings, DagsterInstance.ephemeral(), models=FakeEmbeddingModels(),
                    model_keys=["all-MiniLM-L6-v2"], strategies=STRATEGIES, progress=lambda _: None)
    return Path(settings.home)


def test_beir_folder_runs_end_to_end_with_document_and_evidence_queries(beir_home):
    with duckdb.connect(str(paths.duckdb_path(beir_home)), read_only=True) as connection:
        kinds = connection.sql("SELECT query_kind, phrasing, count(DISTINCT query_id), min(relevant_total), "
                               "max(relevant_total) FROM retrieval_results WHERE retriever = 'dense' "
                               "AND strategy = 'boundaries' GROUP BY ALL ORDER BY ALL").fetchall()
        retrievers = connection.sql("SELECT DISTINCT retriever FROM retrieval_results ORDER BY 1").fetchall()
    # no cross encoder is configured: its rows are absent
    assert retrievers == [("ann",), ("bm25",), ("dense",), ("hybrid",), ("late_interaction",)]
    # 16 judged queries; two of them with two relevant pages (and two evidence sentences); the zero score
    # of the qrels judges nothing
    assert kinds == [("document", "query", 16, 1, 2), ("needle", "evidence", 16, 1, 2)]


def _fold(text: str) -> str:
    return " ".join(text.split())


def _judgements() -> tuple[dict[str, set[str]], dict[str, list[tuple[str, str]]]]:
    """From the folder's own files: the relevant pages of each query (score > 0), and the evidence
    (page, sentence) pairs of each evidence query."""
    relevant: dict[str, set[str]] = {}
    with (BEIR / "qrels" / "test.tsv").open() as handle:
        for query, page, score in list(csv.reader(handle, delimiter="\t"))[1:]:
            if int(score) > 0:
                relevant.setdefault(query, set()).add(page)
    evidence: dict[str, list[tuple[str, str]]] = {}
    for line in (BEIR / "rationales_test.jsonl").read_text().splitlines():
        record = json.loads(line)
        evidence.setdefault(f"{record['query_id']}:evidence", []).extend(
            (record["doc_id"], span["text"]) for span in record["spans"])
    return relevant, evidence


def test_judging_done_independently_agrees_with_our_measures_through_ir_measures(beir_home):
    relevant, evidence = _judgements()
    with duckdb.connect(str(paths.duckdb_path(beir_home)), read_only=True) as connection:
        rows = connection.sql("SELECT strategy, retriever, query_id, phrasing, chunk_ids FROM latest_results"
                              ).to_arrow_table().to_pylist()
        ours = {(r["strategy"], r["retriever"], r["phrasing"]): r
                for r in comparison(connection, ["strategy", "retriever", "phrasing"]).to_pylist()}
    checked = 0
    for strategy in STRATEGIES:
        chunks = pq.read_table(paths.partition_path(beir_home, "chunks", [("strategy", strategy)]),
                               columns=["chunk_id", "doc_id", "content"]).to_pylist()
        page_of = {c["chunk_id"]: c["doc_id"] for c in chunks}
        holders = {query: {c["chunk_id"] for c in chunks for page, sentence in spans if c["doc_id"] == page
                           and _fold(sentence) in _fold(c["content"])}
                   for query, spans in evidence.items()}
        assert all(holders.values())  # every evidence sentence lies whole in some chunk
        for retriever in ("dense", "ann", "bm25", "hybrid", "late_interaction"):
            for phrasing in ("query", "evidence"):
                qrels, run = [], []
                for row in rows:
                    if (row["strategy"], row["retriever"], row["phrasing"]) != (strategy, retriever, phrasing):
                        continue
                    query = row["query_id"]
                    if phrasing == "query":  # judged by page: the chunk list rolled up, each page where its best chunk is
                        ranked, judged = list(dict.fromkeys(page_of[c] for c in row["chunk_ids"])), relevant[query]
                    else:
                        ranked, judged = row["chunk_ids"], holders[query]
                    qrels += [Qrel(query, item, 1) for item in judged]
                    run += [ScoredDoc(query, item, float(len(ranked) - i)) for i, item in enumerate(ranked)]
                measures = [*(Success @ k for k in K), *(P @ k for k in K), RR, nDCG @ 10]
                measures += [R @ k for k in K] if phrasing == "query" else []  # evidence: recall is whether found
                theirs = ir_measures.calc_aggregate(measures, qrels, run)
                expected = ours[(strategy, retriever, phrasing)]
                for k in K:
                    assert theirs[Success @ k] == pytest.approx(expected[f"success_at_{k}"], abs=1e-9)
                    assert theirs[P @ k] == pytest.approx(expected[f"precision_at_{k}"], abs=1e-9)
                    if phrasing == "query":
                        assert theirs[R @ k] == pytest.approx(expected[f"recall_at_{k}"], abs=1e-9)
                assert theirs[RR] == pytest.approx(expected["mrr"], abs=1e-9)
                assert theirs[nDCG @ 10] == pytest.approx(expected["ndcg_at_10"], abs=1e-9)
                checked += 1
    assert checked == 2 * 5 * 2
