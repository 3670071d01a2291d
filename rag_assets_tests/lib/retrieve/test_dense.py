import numpy as np

from rag_assets.lib.retrieve.dense import dense_top_k


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




def test_scoring_in_blocks_gives_the_ranking_of_one_pass_for_any_block_size():
    generator = np.random.default_rng(7)
    chunks = generator.standard_normal((1000, 16)).astype(np.float32)
    chunks[500] = chunks[3]  # exact ties across blocks: broken by chunk index whatever the blocking
    chunks[999] = chunks[3]
    chunks /= np.linalg.norm(chunks, axis=1, keepdims=True)
    queries = np.vstack([chunks[3], generator.standard_normal((7, 16)).astype(np.float32)])
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    one_pass = queries @ chunks.T  # every score at once, sorted by (-cosine, index)
    expected = np.lexsort((np.broadcast_to(np.arange(1000), one_pass.shape), -one_pass), axis=1)[:, :25]
    for block_rows in (1, 7, 24, 25, 26, 333, 1000, 5000):
        indices, cosines = dense_top_k(queries, chunks, 25, block_rows=block_rows)
        # the same chunks with the same cosines; BLAS may round a product differently in another
        # block shape, so equal vectors (3, 500, 999) may tie in any order, and only they
        np.testing.assert_allclose(cosines, np.take_along_axis(one_pass, expected, axis=1), atol=1e-6)
        assert [sorted(row) for row in indices.tolist()] == [sorted(row) for row in expected.tolist()], block_rows
        assert indices[1:].tolist() == expected[1:].tolist(), block_rows
        assert sorted(indices[0, :3].tolist()) == [3, 500, 999] and indices[0, 3:].tolist() == expected[0, 3:].tolist()


def test_blocks_can_stream_from_a_parquet_file_a_row_group_at_a_time(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rag_assets.lib.embed.partition import vector_blocks
    from rag_assets.lib.retrieve.dense import top_k_of_blocks

    generator = np.random.default_rng(8)
    chunks = generator.standard_normal((2000, 8)).astype(np.float32)
    chunks /= np.linalg.norm(chunks, axis=1, keepdims=True)
    path = tmp_path / "embeddings.parquet"
    pq.write_table(pa.table({"vector": pa.FixedSizeListArray.from_arrays(pa.array(chunks.reshape(-1)), 8)}), path,
                   row_group_size=300)
    blocks = list(vector_blocks(path, 8, 256))
    assert max(len(block) for block in blocks) <= 256 and sum(len(block) for block in blocks) == 2000
    streamed = top_k_of_blocks(chunks[:5], vector_blocks(path, 8, 256), 10)
    assert streamed[0].tolist() == dense_top_k(chunks[:5], chunks, 10)[0].tolist()
