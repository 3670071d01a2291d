import numpy as np

from rag_assets.lib.evalset import Query
from rag_assets.lib.retrieval import dense_top_k, first_hit_rank, run_dense


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


def test_run_dense_keeps_misses_as_null_rank():
    chunks = _unit([1, 0], [0, 1])
    embed = lambda texts: _unit([1, 0]) if texts[0] == "east" else _unit([0, 1])  # noqa: E731
    queries = [Query("q1:doc", "q1", "doc", "east"), Query("q2:doc", "q2", "doc", "north")]
    rows = run_dense(queries, embed, ["c-east", "c-north"], chunks, {"q1": {"c-east"}, "q2": set()}, k=2)
    assert [r["hit_rank"] for r in rows] == [1, None]
    assert rows[0]["chunk_ids"] == ["c-east", "c-north"]
    np.testing.assert_allclose(rows[0]["distances"], [0.0, 1.0], atol=1e-6)
    assert all(r["latency_ms"] >= 0 for r in rows)
