"""A worker started with fixed malloc thresholds (Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536)
keeps freed memory for reuse once it embeds: measured by the page faults of repeated large
allocations, in a fresh process each, as glibc reads those settings when a process starts. And the
Dask engine puts shards back in the order of the texts, on a cluster whose worker runs in this
process with a fake model (test_cluster_embedding.py does it with worker processes and real ones)."""

import json
import logging
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from rag_assets.lib.embed import cluster
from rag_assets.lib.embed.cache import EmbeddingCache, embed_with_cache
from rag_assets.lib.embed.cluster import SHARD, DaskEmbedding
from rag_assets.lib.embed.spec import ModelSpec
from rag_assets_tests.fakes import HashingEmbedder

PROBE = """
import json, resource
import numpy as np
from rag_assets.lib.embed.cluster import keep_freed_memory

def faults():  # minor page faults of 50 blocks of 2 MiB, each written and freed
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(50):
        block = np.ones(2 ** 18)
        del block
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

before = faults()
changed = keep_freed_memory()
print(json.dumps({"before": before, "changed": changed, "again": keep_freed_memory(), "after": faults()}))
"""


def _probe(**environment: str) -> dict:
    env = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")} | environment
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_worker_with_dasks_malloc_setting_keeps_freed_memory_for_reuse():
    figures = _probe(MALLOC_TRIM_THRESHOLD_="65536")
    assert figures["changed"] and figures["again"], figures
    # every 2 MiB block was mapped from the kernel and faulted in page by page (512 faults a block)...
    assert figures["before"] > 50 * 256, figures
    # ...and afterwards the heap keeps it: at most the first block's pages
    assert figures["after"] < figures["before"] / 10, figures


def test_a_process_with_glibcs_defaults_is_left_as_it_is():
    figures = _probe()
    assert not figures["changed"] and not figures["again"], figures
    assert figures["before"] < 50 * 256, figures  # glibc's dynamic threshold already reuses freed blocks


class _SpecdEmbedder(HashingEmbedder):
    """The fake as a registered model: DaskEmbedding sends its spec and revision to the workers."""

    spec = ModelSpec(key="fake-cluster-model", loader="fake", package="none", dimension=64, window=64)


class _SlowOnFirstShard(_SpecdEmbedder):
    """The workers' copy of the fake: the same vectors and revision, but a shard holding one of
    ``slow`` takes a moment longer, so it finishes after the shards submitted after it. ``finished``:
    the first text of each shard, in the order they were done."""

    def __init__(self, slow: set[str]) -> None:
        super().__init__()
        self.slow, self.finished = slow, []

    def embed(self, texts):
        if self.slow.intersection(texts):
            time.sleep(0.3)
        vectors = super().embed(texts)
        self.finished.append(texts[0])
        return vectors


@pytest.fixture
def in_process_dask(monkeypatch):
    """A Dask cluster whose worker runs in this process (threads, no worker processes): the tasks
    read this process's ``_WORKER_MODELS``."""
    from distributed import LocalCluster

    monkeypatch.setattr(cluster, "_malloc_kept", False)  # leave this process's allocator alone
    local = LocalCluster(n_workers=1, threads_per_worker=4, processes=False, dashboard_address=None,
                         silence_logs=logging.WARNING)
    try:
        yield local
    finally:
        local.close()


def test_dask_shards_arriving_out_of_order_are_put_back_in_the_order_of_the_texts(in_process_dask, monkeypatch,
                                                                                  tmp_path):
    texts = [f"text {i} word{i} and {i * 7 % 13} more words {i % 5}" for i in range(3 * SHARD + SHARD // 2)]
    driver = _SpecdEmbedder()
    worker = _SlowOnFirstShard(set(texts[:SHARD]))
    monkeypatch.setitem(cluster._WORKER_MODELS, (driver.spec, ""), worker)
    engine = DaskEmbedding(in_process_dask.scheduler_address, driver)
    arrivals: list[int] = []

    def recorded(pending):  # the first position of each shard, as it arrives
        for positions, vectors in engine_shards(pending):
            arrivals.append(int(positions[0]))
            yield positions, vectors

    engine_shards = engine.embed_shards
    try:
        vectors, embedded, reused = embed_with_cache(texts, driver.embed, EmbeddingCache(tmp_path / "cache", 64),
                                                     embed_shards=recorded)
    finally:
        engine.close()
    # the slow first shard was done after a later one (on the worker: whatever positions came back)...
    finished = [texts.index(first) for first in worker.finished]
    assert sorted(finished) == [0, SHARD, 2 * SHARD, 3 * SHARD] and finished != sorted(finished), finished
    # ...and its positions, not its place in the stream, put every vector back with its text
    assert (embedded, reused) == (len(texts), 0)
    np.testing.assert_array_equal(vectors, driver.embed(texts))
    # the driver got the slow shard after another one: the stream was out of order (two fast shards done
    # at the same moment may arrive in either order, so the worker's order is not the driver's)
    assert sorted(arrivals) == sorted(finished) and arrivals.index(0) > 0, arrivals
