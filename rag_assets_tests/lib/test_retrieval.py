import numpy as np

from rag_assets.lib.evalset import Query
from rag_assets.lib.retrieval import dense_top_k, document_ranking, first_hit_rank, judge, run_dense


def _unit(*rows):
    matrix = np.array(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_dense_top_k_orders_by_cosine():
    chunks = _unit([1, 0], [0, 1], [1, 1], [-1, 0])
    # query (1, 0): cosines 1, 0, 0.7071, -1, so the order is chunk 0, 2, 1, 3
    indices, cosines = dense_top_k(_unit([1, 0]), chunks, k=3)
    assert indices.tolist() == [[0, 2, 1]]
    np.testing.assert_allclose(cosines, [[1.0, 0.70710677, 0.0]], atol=1e-6)


def test_dense_ties_break_by_chunk_index_and_k_is_capped():
    chunks = _unit([1, 0], [1, 0], [0, 1])
    indices, _ = dense_top_k(_unit([1, 0]), chunks, k=10)
    assert indices.tolist() == [[0, 1, 2]]


def test_first_hit_rank_and_miss():
    assert first_hit_rank(["a", "b", "c"], {"c", "b"}) == 2
    assert first_hit_rank(["a", "b"], {"z"}) is None


def test_run_dense_ranks_and_times_every_query():
    chunks = _unit([1, 0], [0, 1])
    embed = lambda texts: _unit([1, 0]) if texts[0] == "east" else _unit([0, 1])  # noqa: E731
    queries = [Query("q1:doc", "q1", "doc", "east"), Query("q2:doc", "q2", "doc", "north")]
    rows = run_dense(queries, embed, ["c-east", "c-north"], chunks, k=2)
    assert [r["chunk_ids"] for r in rows] == [["c-east", "c-north"], ["c-north", "c-east"]]
    np.testing.assert_allclose(rows[0]["distances"], [0.0, 1.0], atol=1e-6)
    assert all(r["latency_ms"] >= 0 and r["retriever"] == "dense" for r in rows)


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
