import numpy as np

from rag_assets.lib.retrievers.dense import dense_top_k


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


