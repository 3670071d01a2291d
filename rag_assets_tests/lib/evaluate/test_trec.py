"""TREC run and qrels files of stored rows: the field's own format, checked line by line and by ir_measures."""

import ir_measures
import pytest
from ir_measures import RR, Success, nDCG

from rag_assets.lib.evaluate.trec import trec_lines, write_trec

NEEDLE_ROWS = [
    # the needle in chunk c2 (rank 2), and in a second chunk the list never reached
    {"query_id": "n1:doc", "query_kind": "needle", "chunk_ids": ["c1", "c2", "c3"], "relevant_ranks": [2],
     "relevant_total": 2},
    # a miss whose needle no chunk holds (answer destroyed): still one relevant item, never retrieved
    {"query_id": "n2:doc", "query_kind": "needle", "chunk_ids": ["c3", "c1"], "relevant_ranks": [],
     "relevant_total": 0},
]
DOCUMENT_ROW = {"query_id": "7", "query_kind": "document", "chunk_ids": ["a#0", "b#0", "a#1", "c#0"],
                "relevant_ranks": [2], "relevant_total": 2}
CHUNK_DOC = {"a#0": "a", "a#1": "a", "b#0": "b", "c#0": "c"}


def test_needle_rows_are_judged_by_chunk_with_unretrieved_holders_written_out():
    run, qrels = trec_lines(NEEDLE_ROWS, {}, {}, "tag")
    assert run == ["n1:doc Q0 c1 1 3 tag", "n1:doc Q0 c2 2 2 tag", "n1:doc Q0 c3 3 1 tag",
                   "n2:doc Q0 c3 1 2 tag", "n2:doc Q0 c1 2 1 tag"]
    assert qrels == ["n1:doc 0 c2 1", "n1:doc 0 n1:doc:unretrieved:0 1", "n2:doc 0 n2:doc:unretrieved:0 1"]


def test_document_rows_roll_chunks_up_to_documents_by_best_chunk():
    run, qrels = trec_lines([DOCUMENT_ROW], CHUNK_DOC, {"7": ["b", "d"]}, "tag")
    assert run == ["7 Q0 a 1 3 tag", "7 Q0 b 2 2 tag", "7 Q0 c 3 1 tag"]  # a#1 adds nothing: a is ranked
    assert qrels == ["7 0 b 1", "7 0 d 1"]


def test_the_files_give_our_figures_in_ir_measures(tmp_path):
    run, qrels = trec_lines(NEEDLE_ROWS, {}, {}, "tag")
    run_path, qrels_path = write_trec(tmp_path / "out", "m__s__dense", run, qrels)
    assert run_path.read_text().splitlines() == run and qrels_path.name == "m__s__dense.qrels"
    figures = ir_measures.calc_aggregate([Success @ 1, Success @ 4, RR, nDCG @ 10],
                                         ir_measures.read_trec_qrels(str(qrels_path)),
                                         ir_measures.read_trec_run(str(run_path)))
    # n1: hit at rank 2 (RR 1/2), ideal DCG of two relevant items; n2: a miss
    assert figures[Success @ 1] == 0 and figures[Success @ 4] == pytest.approx(0.5)
    assert figures[RR] == pytest.approx(0.25)
    assert figures[nDCG @ 10] == pytest.approx((1 / 1.584962500721156) / (1 + 1 / 1.584962500721156) / 2)


def test_an_external_retrievers_rows_are_exported_by_where_each_passage_was_located():
    from rag_assets.lib.evaluate.trec import located_documents

    rows = [{"query_id": "7", "query_kind": "document", "chunk_ids": [
        "team:unlocated:1", "a.md#char=0,40", "b.md#char=10,90", "a.md#char=50,99"], "relevant_ranks": [3],
        "relevant_total": 1}]
    chunk_doc = located_documents(rows)
    assert chunk_doc == {"a.md#char=0,40": "a.md", "b.md#char=10,90": "b.md", "a.md#char=50,99": "a.md"}
    run, qrels = trec_lines(rows, chunk_doc, {"7": ["b.md"]}, "tag")
    # the passage found nowhere keeps its rank as a document of its own, never relevant: b.md is third, as judged
    assert run == ["7 Q0 team:unlocated:1 1 3 tag", "7 Q0 a.md 2 2 tag", "7 Q0 b.md 3 1 tag"]
    assert qrels == ["7 0 b.md 1"]
