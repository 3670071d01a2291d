import numpy as np

from rag_assets.lib.embed import cache as embedding_cache
from rag_assets.lib.embed.cache import EmbeddingCache, embed_with_cache, text_hash


class CountingEmbedder:
    def __init__(self):
        self.seen = []

    def __call__(self, texts):
        self.seen += list(texts)
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_nothing_is_embedded_twice_and_a_changed_text_is_embedded_alone(tmp_path):
    cache = EmbeddingCache(tmp_path / "rev1", dimension=2)
    embed = CountingEmbedder()
    texts = ["alpha", "beta", "alpha", "gamma"]  # "alpha" twice: embedded once
    vectors, embedded, reused = embed_with_cache(texts, embed, cache, batch_size=2)
    assert embed.seen == ["alpha", "beta", "gamma"] and (embedded, reused) == (3, 1)
    np.testing.assert_array_equal(vectors[:, 0], [5, 4, 5, 5])
    # the same texts again: nothing embedded
    again, embedded, reused = embed_with_cache(texts, embed, cache)
    assert (embedded, reused) == (0, 4) and len(embed.seen) == 3
    np.testing.assert_array_equal(again, vectors)
    # one text changed: only it is embedded
    _, embedded, reused = embed_with_cache(["alpha", "beta", "delta!", "gamma"], embed, cache)
    assert (embedded, reused) == (1, 3) and embed.seen[-1] == "delta!"
    # another revision's cache knows nothing
    _, embedded, _ = embed_with_cache(["alpha"], embed, EmbeddingCache(tmp_path / "rev2", dimension=2))
    assert embedded == 1


def test_shards_are_compacted_and_keep_every_vector(tmp_path, monkeypatch):
    monkeypatch.setattr(embedding_cache, "COMPACT_AFTER", 3)
    cache = EmbeddingCache(tmp_path / "c", dimension=2)
    for i in range(5):
        cache.add([text_hash(str(i))], np.array([[i, 0]], dtype=np.float32))
    assert len(list((tmp_path / "c").glob("*.parquet"))) <= 3
    found = cache.lookup([text_hash(str(i)) for i in range(5)])
    assert sorted(float(v[0]) for v in found.values()) == [0, 1, 2, 3, 4]
    assert not list((tmp_path / "c").glob(".*.tmp"))


def test_a_damaged_shard_is_discarded_with_a_warning_and_its_texts_embedded_again(tmp_path, caplog):
    cache = EmbeddingCache(tmp_path / "rev1", dimension=2)
    embed = CountingEmbedder()
    embed_with_cache(["alpha"], embed, cache)
    embed_with_cache(["beta"], embed, cache)
    damaged = sorted((tmp_path / "rev1").glob("*.parquet"), key=lambda p: p.stat().st_mtime)[-1]
    damaged.write_bytes(damaged.read_bytes()[:40])  # truncated, as a full disk or a kill leaves a file
    vectors, embedded, reused = embed_with_cache(["alpha", "beta"], embed, cache)
    assert (embedded, reused) == (1, 1) and embed.seen[-1] == "beta"  # recomputed, not a failed run
    np.testing.assert_array_equal(vectors[:, 0], [5, 4])
    assert not damaged.exists()
    assert any("discarded a damaged cache shard" in r.message and str(damaged) in r.message for r in caplog.records)


def test_shards_from_a_cluster_are_cached_in_any_order_and_a_lost_shard_is_an_error(tmp_path):
    import pytest

    embed = CountingEmbedder()
    texts = [f"text {i}" * (i % 5 + 1) for i in range(50)] + ["text 0"]

    def last_shard_first(pending):
        shards = [(np.arange(start, min(start + 8, len(pending))), embed(pending[start:start + 8]))
                  for start in range(0, len(pending), 8)]
        yield from reversed(shards)

    streamed, embedded, reused = embed_with_cache(texts, None, EmbeddingCache(tmp_path / "a", 2),
                                                  embed_shards=last_shard_first)
    in_order, _, _ = embed_with_cache(texts, CountingEmbedder(), EmbeddingCache(tmp_path / "b", 2))
    assert (embedded, reused) == (50, 1)
    np.testing.assert_array_equal(streamed, in_order)

    def loses_a_shard(pending):  # the last shard, of 2 texts, never arrives
        yield from list(last_shard_first(pending))[1:]

    with pytest.raises(RuntimeError, match="2 of 50 texts came back without a vector"):
        embed_with_cache(texts, None, EmbeddingCache(tmp_path / "c", 2), embed_shards=loses_a_shard)


def test_compaction_by_tier_rewrites_each_vector_about_log_n_times(tmp_path, monkeypatch):
    """One merge of every shard after each few writes rewrote the whole cache each time (quadratic:
    at a million texts in shards of 64, about 700 GB rewritten); by tier, each vector is rewritten
    once per tier."""
    monkeypatch.setattr(embedding_cache, "COMPACT_AFTER", 3)
    written = []
    original = embedding_cache.ShardFolder._write

    def counting(self, tables, tier):
        tables = list(tables)
        written.append(sum(table.num_rows for table in tables))
        return original(self, tables, tier)

    monkeypatch.setattr(embedding_cache.ShardFolder, "_write", counting)
    cache = EmbeddingCache(tmp_path / "c", dimension=2)
    writes = 256
    for i in range(writes):
        cache.add([text_hash(str(i))], np.array([[i, 0]], dtype=np.float32))
    shards = sorted((tmp_path / "c").glob("*.parquet"))
    tiers = [embedding_cache.tier_of(shard) for shard in shards]
    assert tiers == [4], tiers  # 4^4 = 256 writes: merged by fours, four times, into one shard
    assert sum(written) <= writes * (max(tiers) + 1), sum(written)  # a write, then once per tier
    found = cache.lookup([text_hash(str(i)) for i in range(writes)])
    assert sorted(float(v[0]) for v in found.values()) == list(range(writes))


def test_shards_named_before_tiers_are_read_and_merged_as_tier_zero(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setattr(embedding_cache, "COMPACT_AFTER", 3)
    folder = tmp_path / "c"
    folder.mkdir()
    pq.write_table(pa.table({"text_sha256": [text_hash("old")], "vector": pa.FixedSizeListArray.from_arrays(
        pa.array([7.0, 0.0], pa.float32()), 2)}), folder / "0123abcd.parquet")  # an earlier version's name
    cache = EmbeddingCache(folder, dimension=2)
    assert embedding_cache.tier_of(folder / "0123abcd.parquet") == 0
    for i in range(3):
        cache.add([text_hash(str(i))], np.array([[i, 0]], dtype=np.float32))
    assert [embedding_cache.tier_of(shard) for shard in folder.glob("*.parquet")] == [1]
    assert float(cache.lookup([text_hash("old")])[text_hash("old")][0]) == 7.0


def test_vectors_are_written_into_the_given_array_and_nowhere_else(tmp_path):
    texts = ["alpha", "beta", "alpha", "gamma"]
    cache = EmbeddingCache(tmp_path / "rev1", dimension=2)
    embed_with_cache(texts[:2], CountingEmbedder(), cache)  # alpha and beta cached
    out = np.lib.format.open_memmap(tmp_path / "out.npy", mode="w+", dtype=np.float32, shape=(4, 2))
    returned, embedded, reused = embed_with_cache(texts, CountingEmbedder(), cache, out=out)
    assert returned is out and (embedded, reused) == (1, 3)
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy")[:, 0], [5, 4, 5, 5])


def test_a_token_lookup_reads_only_the_row_groups_holding_its_keys(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from rag_assets.lib.embed.cache import TokenVectorCache

    cache = TokenVectorCache(tmp_path / "tokens", 2)
    vectors = {text_hash(f"chunk {i}"): np.full((3, 2), i, dtype=np.float16) for i in range(10 * cache.group_rows)}
    cache.add(vectors)
    read = []
    original = pq.ParquetFile.read_row_group
    monkeypatch.setattr(pq.ParquetFile, "read_row_group",
                        lambda self, group, **kw: read.append(group) or original(self, group, **kw))
    wanted = [text_hash("chunk 5"), text_hash(f"chunk {7 * cache.group_rows + 1}")]
    found = cache.lookup(wanted + [text_hash("never stored")])
    assert sorted(read) == [0, 7] and set(found) == set(wanted)
    np.testing.assert_array_equal(found[wanted[1]], vectors[wanted[1]])
    read.clear()
    assert cache.lookup([text_hash("never stored")]) == {} and read == []  # the key column alone said no


def test_a_token_cache_read_one_question_at_a_time_looks_up_only_what_it_is_asked(tmp_path):
    from rag_assets.lib.embed.cache import TokenVectorCache
    from rag_assets.lib.retrieve.late_interaction import TokenVectors

    class Tokens:
        asked: list = []

        def token_vectors(self, texts):
            self.asked += list(texts)
            return [np.full((2, 2), len(text), dtype=np.float32) for text in texts]

    texts = [f"text {'x' * i}" for i in range(6)]
    cache = TokenVectorCache(tmp_path / "tokens", 2)
    cache.add({text_hash(texts[i]): np.full((2, 2), i, dtype=np.float16) for i in (1, 2, 3)})
    looked_up = []
    lookup = cache.lookup
    cache.lookup = lambda hashes: looked_up.append(list(hashes)) or lookup(hashes)
    one_at_a_time = TokenVectors(Tokens(), texts, cache, read_all=False)
    assert [v[0, 0] for v in one_at_a_time.get([2, 4])] == [2, len(texts[4])]
    assert looked_up == [[text_hash(texts[2]), text_hash(texts[4])]] and one_at_a_time.reused == 1
    one_at_a_time.get([2, 4, 3])  # 2 is known and 4 was looked up: only 3 is read
    assert looked_up[1:] == [[text_hash(texts[3])]] and one_at_a_time.reused == 2
    assert Tokens.asked == [texts[4]]
    everything = TokenVectors(Tokens(), texts, cache)  # a run: one read of every chunk
    everything.get([0]) and everything.get([5])
    assert looked_up[2] == [text_hash(t) for t in texts] and len(looked_up) == 3 and everything.reused == 3


def test_a_shard_merged_away_on_one_machine_is_dropped_from_the_other_machines_copy(tmp_path, monkeypatch):
    """A local folder stands for the bucket, two storage folders for two machines sharing it."""
    from rag_assets.lib.store import object_store as store_module
    from rag_assets.lib.store.object_store import ObjectStore

    monkeypatch.setattr(store_module, "_filesystems", {})  # no client of this bucket outlives the test
    monkeypatch.setattr(embedding_cache, "COMPACT_AFTER", 2)
    bucket = tmp_path / "bucket"
    bucket.mkdir()

    def machine(name):
        home = tmp_path / name
        store = ObjectStore(f"file://{bucket}", home, {"auto_mkdir": True})
        return home / "embedding_cache" / "rev1", EmbeddingCache(home / "embedding_cache" / "rev1", 2, store)

    def in_bucket():
        return sorted(path.name for path in (bucket / "embedding_cache" / "rev1").glob("*.parquet"))

    def held(folder):
        return sorted(path.name for path in folder.glob("*.parquet"))

    (first, first_cache), (second, second_cache) = machine("machine-1"), machine("machine-2")
    embed_with_cache(["alpha"], CountingEmbedder(), first_cache)
    embed = CountingEmbedder()
    embed_with_cache(["alpha"], embed, second_cache)  # the second machine downloads the first one's shard
    copied = held(second)
    assert embed.seen == [] and copied == in_bucket() and len(copied) == 1

    embed_with_cache(["beta"], CountingEmbedder(), first_cache)
    embed_with_cache(["gamma!"], CountingEmbedder(), first_cache)  # 3 shards of tier 0 > 2: merged into one
    merged = in_bucket()
    assert len(merged) == 1 and embedding_cache.tier_of(bucket / merged[0]) == 1 and held(first) == merged

    vectors, embedded, reused = embed_with_cache(["alpha", "beta", "gamma!"], embed, second_cache)
    assert (embedded, reused) == (0, 3) and embed.seen == []
    np.testing.assert_array_equal(vectors[:, 0], [5, 4, 6])
    # the merged-away shard is gone from the second machine too, ETag and all, and not uploaded again
    assert held(second) == merged == in_bucket()
    assert not (second / f".{copied[0]}.etag").exists()
