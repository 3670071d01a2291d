from rag_assets.lib.evalsets.judging import document_ranking, judge
from rag_assets.lib.evalsets.queries import Query

CHUNK_DOC = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}


def test_judge_a_needle_query_by_the_chunks_that_hold_it():
    query = Query("n:doc", "n", "doc", "?", spans=(("A", "x"),))
    # holders a2 and b1... the list ranks a1, a2, c1, b1: holders land at 2 and 4
    assert judge(query, ["a1", "a2", "c1", "b1"], {"a2", "b1"}, CHUNK_DOC) == {
        "hit_rank": 2, "relevant_ranks": [2, 4], "relevant_total": 2}
    # a miss is a null rank, kept
    assert judge(query, ["a1", "c1"], {"a2"}, CHUNK_DOC) == {"hit_rank": None, "relevant_ranks": [], "relevant_total": 1}


def test_judge_a_document_query_on_ranks_rolled_up_by_best_chunk():
    query = Query("q", None, "query", "?", query_kind="document", relevant_doc_ids=("B", "C"))
    # chunks a1, a2, b1, c1 roll up to documents A (1), B (2), C (3)
    assert document_ranking(["a1", "a2", "b1", "c1"], CHUNK_DOC) == ["A", "B", "C"]
    assert judge(query, ["a1", "a2", "b1", "c1"], set(), CHUNK_DOC) == {
        "hit_rank": 2, "relevant_ranks": [2, 3], "relevant_total": 2}


def test_judge_out_of_domain_has_nothing_to_find():
    query = Query("o1", None, "out_of_domain", "?", query_kind="out_of_domain")
    assert judge(query, ["a1"], set(), CHUNK_DOC) == {"hit_rank": None, "relevant_ranks": [], "relevant_total": 0}


def test_span_holders_at_the_edges_of_what_they_are_given():
    from rag_assets.lib.evalsets.judging import chunks_by_document, span_holders

    text = "The needle sentence. Then the rest of the page."
    chunks = [{"chunk_id": "late", "doc_id": "d", "span_start": 21, "end": len(text)},
              {"chunk_id": "whole", "doc_id": "d", "span_start": 0, "end": len(text)}]
    by_doc = chunks_by_document(chunks)
    assert span_holders([("d", "The needle sentence.")], by_doc, {"d": text}) == {"whole"}  # from span_start only
    assert span_holders([("gone", "The needle sentence.")], by_doc, {"d": text}) == set()  # a page with no chunks
    # a page whose text was not extracted (failed) holds nothing, even with chunk rows left for it
    assert span_holders([("d", "The needle sentence.")], by_doc, {}) == set()
