"""Embedding through real clusters, started and stopped here: a Ray head (`ray start --head`, its own
process session) and a Dask LocalCluster of worker processes. The same vectors in the same order as
in process, the cache and the stamp as before; through the `embeddings` asset, a Ray-built partition
is as current as an in-process one."""

import os

import numpy as np
import pytest

from rag_assets.lib.embed.cluster import DaskEmbedding, RayEmbedding, cluster_embedding
from rag_assets.lib.embed.models import load_model
from rag_assets.lib.embed.partition import embed_chunks, vectors_of
from rag_assets_tests.servers import DaskCluster, RayHead

pytestmark = [pytest.mark.integration, pytest.mark.servers]


@pytest.fixture(scope="module")
def ray_head():
    head = RayHead(cpus=2)
    saved = {name: os.environ.get(name) for name in head.client_env}
    os.environ.update(head.client_env)  # this process is the driver: it needs the head's token
    try:
        yield head
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)
        head.stop()


@pytest.fixture
def dask_cluster():
    cluster = DaskCluster(2, {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    try:
        yield cluster
    finally:
        cluster.stop()  # and our environment as it was: later tests' subprocesses would run on one thread
        for pid in cluster.pids:  # every worker process is gone
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


SHARDS_OF_TEXTS = 64  # lib/embed/cluster.py's SHARD, here to build four of them


@pytest.fixture(scope="module")
def shard_chunks():
    """224 distinct texts in four shards of 64: the first shard's texts of 300 words (past the model's
    window), the others' of 12, so with two workers the first shard finishes after the second and the
    vectors arrive out of order: only their positions put them back. Words of the small corpus."""
    import pyarrow as pa

    from rag_assets.lib.ingest.corpus import scan_corpus
    from rag_assets.lib.ingest.documents import extract_entry
    from rag_assets_tests.conftest import SMALL_CORPUS

    words = " ".join(row["text"] for entry in scan_corpus(SMALL_CORPUS)
                     for row in extract_entry(SMALL_CORPUS, entry.path, entry.format, entry.sha256, 10**8)).split()
    def passage(start: int, length: int) -> str:
        return " ".join(words[(start + j) % len(words)] for j in range(length))

    long = [passage(i * 101, 300) for i in range(SHARDS_OF_TEXTS)]
    short = [f"{passage(i * 37, 12)} ({i})" for i in range(160)]
    texts = long + short
    assert len(set(texts)) == len(texts) == 224 and {len(text.split()) for text in long} == {300}
    return pa.table({"chunk_id": [f"text-{i}" for i in range(len(texts))], "text": texts,
                     "span_start": [0] * len(texts), "end": [len(text) for text in texts],
                     "extractor_version": ["1"] * len(texts), "snapshot_id": ["s"] * len(texts)})


def _recording_arrivals(engine, arrivals: list[int]):
    """The engine, with the first position of every shard it yields appended to ``arrivals``."""
    shards = engine.embed_shards

    def recorded(texts):
        for positions, vectors in shards(texts):
            arrivals.append(int(positions[0]))
            yield positions, vectors

    engine.embed_shards = recorded
    return engine


def _same_as_in_process(chunks, connect, engine: str, folder) -> list[int]:
    """Asserts both real models' vectors from the cluster are the in-process ones, in order; returns the
    order all-MiniLM-L6-v2's shards arrived in (their first positions)."""
    order: list[int] = []
    for key in ("all-MiniLM-L6-v2", "wordllama"):
        embedder = load_model(key)
        local, local_figures = embed_chunks(chunks, embedder, "blind", folder / f"{key}-local")
        arrivals: list[int] = []
        remote_embedding = _recording_arrivals(connect(embedder), arrivals)
        try:
            remote, figures = embed_chunks(chunks, embedder, "blind", folder / f"{key}-remote", cluster=remote_embedding)
        finally:
            remote_embedding.close()
        order = arrivals if key == "all-MiniLM-L6-v2" else order
        assert figures["embedded_on"] == f"{engine} cluster (2 workers)" and local_figures["embedded_on"] == "this process"
        assert figures["texts_embedded"] == local_figures["texts_embedded"] == len(set(chunks.column("text").to_pylist()))
        a, b = vectors_of(local, embedder.dimension), vectors_of(remote, embedder.dimension)
        cosines = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        assert cosines.min() >= 0.9999999, key
        assert remote.drop_columns(["vector"]).equals(local.drop_columns(["vector"]))  # ids, tokens, stamp
        # the cache is that of the in-process path: a second pass embeds nothing, on the cluster or not
        remote_embedding = connect(embedder)
        try:
            _, again = embed_chunks(chunks, embedder, "blind", folder / f"{key}-remote", cluster=remote_embedding)
        finally:
            remote_embedding.close()
        assert again["texts_embedded"] == 0
    return order


def test_vectors_from_a_ray_cluster_equal_the_in_process_ones_in_order(ray_head, shard_chunks, tmp_path):
    arrivals = _same_as_in_process(shard_chunks, lambda embedder: RayEmbedding(ray_head.address, embedder), "ray",
                                   tmp_path)
    assert sorted(arrivals) == [0, 64, 128, 192]  # four batches, whatever their order


def test_vectors_from_a_dask_cluster_equal_the_in_process_ones_in_order(dask_cluster, shard_chunks, tmp_path):
    arrivals = _same_as_in_process(shard_chunks, lambda embedder: DaskEmbedding(dask_cluster.address, embedder),
                                   "dask", tmp_path)
    # the slow first shard came back after a later one: the order was restored by position, not by arrival
    assert sorted(arrivals) == [0, 64, 128, 192] and arrivals != sorted(arrivals)


def _faults_of_large_blocks() -> int:
    """On a worker: the minor page faults of 50 blocks of 2 MiB, each written and freed."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(50):
        block = np.ones(2 ** 18)
        del block
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def _has_a_model() -> bool:
    from rag_assets.lib.embed.cluster import worker_models

    return bool(worker_models())


def test_a_dask_worker_keeps_freed_memory_for_reuse_once_it_embeds(dask_cluster):
    """Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536: every block above 128 KiB is
    mapped from the kernel and returned to it (the model ran 28 % slower). A worker that embedded
    reuses freed memory instead."""
    from distributed import Client

    with Client(dask_cluster.address, set_as_default=False) as client:
        assert set(client.run(os.environ.get, "MALLOC_TRIM_THRESHOLD_").values()) == {"65536"}  # Dask's default
        before = client.run(_faults_of_large_blocks)
        remote = DaskEmbedding(dask_cluster.address, load_model("wordllama"))
        try:
            list(remote.embed_shards([f"text number {i}" for i in range(64 * 16)]))
        finally:
            remote.close()
        embedded, after = client.run(_has_a_model), client.run(_faults_of_large_blocks)
    assert any(embedded.values())
    for worker, has_model in embedded.items():
        assert before[worker] > 50 * 256, before  # each 2 MiB block faulted in page by page
        if has_model:
            assert after[worker] < before[worker] / 10, (before, after)


def test_the_embeddings_asset_embeds_on_the_configured_ray_cluster_and_its_partition_stays_current(
        ray_head, tmp_path):
    from dagster import AssetKey, DagsterInstance

    from rag_assets.resources import EmbeddingModels, RagSettings
    from rag_assets.runner.evaluation import materialize_all
    from rag_assets_tests.conftest import FIXTURES

    inputs = dict(home=str(tmp_path / "home"), corpus_dir=str(FIXTURES / "tiny_corpus"),
                  eval_set=str(FIXTURES / "tiny_needles.jsonl"), out_of_domain=str(FIXTURES / "tiny_out_of_domain.jsonl"),
                  retrievers=["dense", "bm25", "hybrid"])
    instance = DagsterInstance.ephemeral()
    materialize_all(RagSettings(**inputs, ray_address=ray_head.address), instance, models=EmbeddingModels(),
                    model_keys=["wordllama"], strategies=["blind"], progress=lambda _: None)
    event = instance.get_latest_materialization_event(AssetKey("embeddings"))
    metadata = {key: value.value for key, value in event.asset_materialization.metadata.items()}
    assert metadata["embedded_on"] == "ray cluster (2 workers)" and metadata["texts_embedded"] > 0
    # where it was embedded is not what it was built with: in process, everything is up to date
    outcome = materialize_all(RagSettings(**inputs), instance, models=EmbeddingModels(), model_keys=["wordllama"],
                              strategies=["blind"], progress=lambda _: None)
    assert "model_partition [wordllama x blind]" in " ".join(outcome.up_to_date), outcome.up_to_date


def test_a_worker_with_other_weights_refuses(ray_head):
    embedder = load_model("wordllama")

    class Other:  # the driver believes in another revision than the workers have
        spec, revision, dimension = embedder.spec, "0123456789abcdef", embedder.dimension

    remote = RayEmbedding(ray_head.address, Other())
    try:
        with pytest.raises(Exception, match=r"has weights \w+ of wordllama, the driver 0123456789abcdef"):
            list(remote.embed_shards(["a text"]))
    finally:
        remote.close()


def test_one_engine_at_a_time():
    assert cluster_embedding("", "", load_model("wordllama")) is None
    with pytest.raises(ValueError, match="both ray_address and dask_scheduler are set"):
        cluster_embedding("127.0.0.1:6379", "tcp://127.0.0.1:8786", load_model("wordllama"))
