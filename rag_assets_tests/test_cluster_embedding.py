"""Embedding through a real Dask cluster (a LocalCluster of worker processes, started and stopped here):
the same vectors in the same order as in process, the cache and the stamp as before."""

import os

import numpy as np
import pyarrow.parquet as pq
import pytest

from rag_assets.lib import paths
from rag_assets.lib.cluster_embedding import ClusterEmbedding
from rag_assets.lib.embedding import load_model
from rag_assets.lib.embedding_rows import embed_chunks, vectors_of


@pytest.fixture
def cluster():
    from distributed import LocalCluster

    local = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address=None, env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    pids = [worker.process.pid for worker in local.workers.values()]
    try:
        yield local
    finally:
        local.close()
        for pid in pids:  # every worker process is gone
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


def test_vectors_from_the_cluster_equal_the_in_process_ones_in_order(cluster, tmp_path, tiny_corpus, tiny_needles):
    from dagster import DagsterInstance

    from rag_assets.resources import RagSettings
    from rag_assets.runner import materialize_all
    from rag_assets_tests.fakes import FakeEmbeddingModels

    # the tiny corpus's chunks (the fake model only builds them; the real ones embed below)
    settings = RagSettings(home=str(tmp_path / "chunks-home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    materialize_all(settings, DagsterInstance.ephemeral(), models=FakeEmbeddingModels(),
                    model_keys=["all-MiniLM-L6-v2"], strategies=["blind"], progress=lambda _: None)
    chunks = pq.read_table(paths.partition_path(tmp_path / "chunks-home", "chunks", [("strategy", "blind")]))
    chunks = chunks.slice(0, min(120, len(chunks)))
    for key in ("all-MiniLM-L6-v2", "wordllama"):
        embedder = load_model(key)
        local, local_figures = embed_chunks(chunks, embedder, "blind", tmp_path / "local")
        remote_embedding = ClusterEmbedding(cluster.scheduler_address, embedder)
        try:
            remote, figures = embed_chunks(chunks, embedder, "blind", tmp_path / "remote", cluster=remote_embedding)
        finally:
            remote_embedding.close()
        assert figures["embedded_on"] == "dask cluster (2 workers)" and local_figures["embedded_on"] == "this process"
        assert figures["texts_embedded"] == local_figures["texts_embedded"] == len(set(chunks.column("text").to_pylist()))
        a, b = vectors_of(local, embedder.dimension), vectors_of(remote, embedder.dimension)
        cosines = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        assert cosines.min() >= 0.9999999, key
        assert remote.drop_columns(["vector"]).equals(local.drop_columns(["vector"]))  # ids, tokens, stamp
        # the cache is that of the in-process path: a second pass embeds nothing, on the cluster or not
        remote_embedding = ClusterEmbedding(cluster.scheduler_address, embedder)
        try:
            _, again = embed_chunks(chunks, embedder, "blind", tmp_path / "remote", cluster=remote_embedding)
        finally:
            remote_embedding.close()
        assert again["texts_embedded"] == 0


def test_a_worker_with_other_weights_refuses(cluster):
    embedder = load_model("wordllama")
    remote = ClusterEmbedding(cluster.scheduler_address, embedder)
    try:
        class Other:  # the driver believes in another revision than the workers have
            spec, revision, dimension = embedder.spec, "0123456789abcdef", embedder.dimension

        remote.embedder = Other()
        with pytest.raises(RuntimeError, match=r"has weights \w+ of wordllama, the driver 0123456789abcdef"):
            remote.embed(["a text"])
    finally:
        remote.close()
