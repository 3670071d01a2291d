import numpy as np
import pytest

from rag_assets.lib.retrieve.ann import HNSWConfig, HNSWIndex, recall_against_exact
from rag_assets.lib.retrieve.dense import dense_top_k


def _unit(rows: int, dimension: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, dimension)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_the_graph_finds_nearly_all_of_the_exact_top_k_with_exact_cosines_and_the_same_answer_every_build():
    chunks, queries = _unit(3000, 48, seed=1), _unit(200, 48, seed=2)
    exact, _ = dense_top_k(queries, chunks, 10)
    found, cosines = HNSWIndex(chunks).search(queries, 10)
    recall = recall_against_exact([list(r) for r in found], [list(r) for r in exact], 10)
    assert recall >= 0.95  # measured 0.99+ with the default graph; a broken index scores near 10 / 3000
    np.testing.assert_allclose(cosines, np.einsum("qd,qkd->qk", queries, chunks[found]), atol=1e-5)
    assert (np.diff(cosines, axis=1) <= 1e-6).all()  # best first
    again, _ = HNSWIndex(chunks).search(queries, 10)
    np.testing.assert_array_equal(found, again)  # single-threaded build: deterministic
    # a starved search is measurably worse: the figure can fail
    poor, _ = HNSWIndex(chunks, HNSWConfig(m=2, ef_construction=4, ef_search=1)).search(queries, 10)
    assert recall_against_exact([list(r) for r in poor], [list(r) for r in exact], 10) < recall


def test_small_and_empty_indexes():
    chunks = _unit(3, 8, seed=3)
    found, cosines = HNSWIndex(chunks).search(chunks[:1], 10)
    assert sorted(found[0].tolist()) == [0, 1, 2] and found[0][0] == 0
    empty = HNSWIndex(np.zeros((0, 8), np.float32)).search(chunks[:1], 5)
    assert empty[0].shape == (1, 0)


def test_the_duckdb_view_and_the_partition_metadata_compute_the_same_recall():
    """ann_recall is computed twice: in Python for retrieval_runs' metadata, in SQL for the report.
    On lists where the graph misses some of the exact top k, both give the same shares."""
    import duckdb

    from rag_assets.lib.evaluate.measures import ann_recall_view
    from rag_assets.lib.retrieve.ann import RECALL_DEPTHS, recall_against_exact

    exact = [[f"c{i}" for i in range(25)], [f"c{i}" for i in range(3)], [f"c{i}" for i in range(25, 0, -1)]]
    approximate = [["x", *exact[0][1:]], ["c2", "y", "c0"], [*exact[2][:9], "z", *exact[2][10:24], "w"]]
    connection = duckdb.connect()
    connection.execute("CREATE TABLE latest_results (model VARCHAR, strategy VARCHAR, query_id VARCHAR, "
                       "retriever VARCHAR, chunk_ids VARCHAR[], stage_ms DOUBLE)")
    for number, (a, e) in enumerate(zip(approximate, exact)):
        connection.execute("INSERT INTO latest_results VALUES ('m', 's', ?, 'ann', ?, 1.0), ('m', 's', ?, 'dense', ?, 2.0)",
                           [f"q{number}", a, f"q{number}", e])
    connection.execute(ann_recall_view())
    row = connection.sql("SELECT * FROM ann_recall").fetchall()[0]
    in_python = [recall_against_exact(approximate, exact, k) for k in RECALL_DEPTHS]
    assert row[3:3 + len(RECALL_DEPTHS)] == pytest.approx(in_python) and min(in_python) < 1.0
