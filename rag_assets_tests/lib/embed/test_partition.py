"""A partition streams to Parquet: vectors go to a memory-mapped scratch file as they come, and the
file is written a row group at a time, so the driver never holds the partition's vectors."""

import json
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rag_assets.lib.embed import partition as embedding_rows
from rag_assets.lib.embed.partition import embed_chunks, vectors_of, write_embeddings
from rag_assets_tests.fakes import HashingEmbedder

DIMENSION = 384


def _chunks(count: int) -> pa.Table:
    texts = [f"chunk {i} about topic {i % 97} and subject {i % 13}" for i in range(count)]
    return pa.table({"chunk_id": [f"doc.md#{i}" for i in range(count)], "text": texts,
                     "span_start": [0] * count, "end": [len(text) for text in texts],
                     "extractor_version": ["x1"] * count, "snapshot_id": ["s1"] * count})


class ShardedCluster:
    """A stand-in engine: the texts in shards of 100, last shard first (as workers may finish)."""

    engine, workers = "fake", 2

    def __init__(self, embedder) -> None:
        self.embedder = embedder

    def embed_shards(self, texts):
        starts = list(range(0, len(texts), 100))
        for start in reversed(starts):
            yield np.arange(start, min(start + 100, len(texts))), self.embedder.embed(texts[start:start + 100])


def _traced_peak(folder, chunks, embedder) -> int:
    """numpy's peak allocation (tracemalloc) while ``write_embeddings`` writes the partition."""
    tracemalloc.start()
    try:
        write_embeddings(folder / "embeddings.parquet", chunks, embedder, "blind", folder / "home",
                         cluster=ShardedCluster(embedder))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_partition_is_written_in_row_groups_without_holding_its_vectors(tmp_path, monkeypatch):
    """The same 20,000 chunks at 96 and at 1,536 dimensions: holding the vectors would add their
    111 MB of difference to the peak; streamed, only shards of 100 and row groups of 2,000 grow. What
    stays is per chunk and not per dimension (texts, hashes, token counts)."""
    monkeypatch.setattr(embedding_rows, "ROW_GROUP", 2_000)
    chunks = _chunks(20_000)
    small, large = HashingEmbedder(dimension=96), HashingEmbedder(dimension=1536)
    (tmp_path / "small").mkdir()
    (tmp_path / "large").mkdir()
    growth = _traced_peak(tmp_path / "large", chunks, large) - _traced_peak(tmp_path / "small", chunks, small)
    vectors_growth = 20_000 * (1536 - 96) * 4
    assert growth < vectors_growth / 4, (growth, vectors_growth)
    stored = pq.ParquetFile(tmp_path / "large" / "embeddings.parquet")
    assert stored.metadata.num_row_groups == 10 and stored.metadata.num_rows == 20_000
    table = stored.read()
    assert table.column("chunk_id").to_pylist() == chunks.column("chunk_id").to_pylist()
    np.testing.assert_array_equal(vectors_of(table, 1536), large.embed(chunks.column("text").to_pylist()))
    assert not [p for p in (tmp_path / "large").iterdir() if p.name.startswith(".vectors-")]  # no scratch left


def test_the_streamed_file_equals_the_in_memory_table_and_reuses_the_cache(tmp_path):
    chunks, embedder = _chunks(300), HashingEmbedder(dimension=DIMENSION)
    first, figures = embed_chunks(chunks, embedder, "blind", tmp_path)
    again, figures_again = embed_chunks(chunks, embedder, "blind", tmp_path, cluster=ShardedCluster(embedder))
    assert figures["texts_embedded"] == 300 and figures_again["texts_embedded"] == 0
    assert first.equals(again)
    assert first.column("model")[0].as_py() == embedder.key and first.column("strategy")[0].as_py() == "blind"
    empty, figures_empty = embed_chunks(chunks.slice(0, 0), embedder, "blind", tmp_path)
    assert empty.num_rows == 0 and empty.schema == first.schema and figures_empty["chunks"] == 0


class Reweighted(HashingEmbedder):
    """The fake model at weights revision ``r<n>``: the same words, vectors rolled by n buckets, so each
    revision's vectors differ. Records the texts it embeds."""

    def __init__(self, revision: str) -> None:
        super().__init__(dimension=DIMENSION)
        self.revision, self.embedded = revision, []

    def embed(self, texts):
        self.embedded += list(texts)
        return np.roll(super().embed(texts), int(self.revision[1:]), axis=1)


def test_new_weights_embed_every_text_again_and_the_old_revision_keeps_its_vectors(tmp_path):
    chunks = _chunks(40)
    texts = chunks.column("text").to_pylist()
    r1, r2 = Reweighted("r1"), Reweighted("r2")
    expected = {revision: Reweighted(revision).embed(texts) for revision in ("r1", "r2")}
    embed_chunks(chunks, r1, "blind", tmp_path)
    table, figures = embed_chunks(chunks, r2, "blind", tmp_path)
    assert r2.embedded == texts and (figures["texts_embedded"], figures["texts_reused"]) == (40, 0)
    np.testing.assert_array_equal(vectors_of(table, DIMENSION), expected["r2"])
    assert table.column("revision").unique().to_pylist() == ["r2"]
    # r1's cache is still its own: embedding with r1 again reuses r1's vectors
    again, figures = embed_chunks(chunks, Reweighted("r1"), "blind", tmp_path)
    assert figures["texts_embedded"] == 0
    np.testing.assert_array_equal(vectors_of(again, DIMENSION), expected["r1"])


class Clocked(HashingEmbedder):
    """The fake model on a fake clock: embedding a text takes one second of it."""

    def __init__(self, clock: list[float]) -> None:
        super().__init__(dimension=DIMENSION)
        self.clock = clock

    def embed(self, texts):
        self.clock[0] += len(texts)
        return super().embed(texts)


def test_a_partition_carries_its_models_embedding_rate_measured_when_it_embedded_every_text(tmp_path, monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(embedding_rows.time, "perf_counter", lambda: clock[0])
    embedder = Clocked(clock)
    chunks = _chunks(40)  # every text is 8 words: 8 tokens a second
    doubled = pa.concat_tables([chunks, chunks])  # a repeated text is embedded once: still 8 tokens a second
    table, figures = embed_chunks(doubled, embedder, "blind", tmp_path)
    rate = {"tokens_per_second": 8.0, "tokens": 320, "seconds": 40.0, "embedded_on": "this process"}
    assert json.loads(table.schema.metadata[embedding_rows.RATE_KEY]) == rate
    assert figures["embedding_tokens_per_second"] == 8.0
    # built from the cache, a partition carries the rate its texts were embedded at
    table, figures = embed_chunks(chunks.slice(0, 10), embedder, "other", tmp_path)
    assert figures["texts_embedded"] == 0 and json.loads(table.schema.metadata[embedding_rows.RATE_KEY]) == rate
    # a partition that reused part of its texts measures nothing; a larger full measurement replaces the rate
    table, _ = embed_chunks(_chunks(60), Clocked(clock), "mixed", tmp_path)
    assert json.loads(table.schema.metadata[embedding_rows.RATE_KEY]) == rate
    larger = pa.table({name: [f"{value} more words here" if name == "text" else value
                              for value in _chunks(50).column(name).to_pylist()] for name in chunks.column_names})
    table, _ = embed_chunks(larger, Clocked(clock), "larger", tmp_path)
    assert json.loads(table.schema.metadata[embedding_rows.RATE_KEY])["tokens"] == 50 * 11
    # another revision has measured nothing: its partitions carry no rate until one embeds all its texts
    assert embedding_rows.measured_rate(tmp_path / "nowhere", 100, 1.0, 5, "this process") is None


def test_the_evaluation_reads_each_models_best_measured_rate(tmp_path):
    from rag_assets.lib.evaluate.results_store import embedding_rates

    home = tmp_path / "home"
    for model, strategy, rate in (("m1", "a", {"tokens_per_second": 10.0, "tokens": 100}),
                                  ("m1", "b", {"tokens_per_second": 20.0, "tokens": 300}),
                                  ("m2", "a", None)):
        folder = home / "parquet" / "embeddings" / f"model={model}" / f"strategy={strategy}"
        folder.mkdir(parents=True)
        table = pa.table({"chunk_id": ["c"], "model": [model]})
        if rate:
            table = table.replace_schema_metadata({embedding_rows.RATE_KEY: json.dumps(rate)})
        pq.write_table(table, folder / "data.parquet")
    assert embedding_rates(home).to_pylist() == [{"model": "m1", "tokens_per_second": 20.0}]
    assert embedding_rates(home, registered=["m2"]).num_rows == 0
