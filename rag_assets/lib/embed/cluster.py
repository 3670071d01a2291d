"""Embedding texts on a cluster: shards of texts to workers that each hold the model.

Two engines, chosen by the settings (or the environment):

- **Ray** (``ray_address``, default ``$RAY_ADDRESS``): a Ray Data pipeline whose ``map_batches``
  runs one model-holding actor per worker CPU; results stream back shard by shard as they finish.
- **Dask** (``dask_scheduler``, default ``$RAG_ASSETS_DASK_SCHEDULER``): one task per shard on a
  ``distributed`` cluster; each worker process keeps the model loaded between tasks.

Without either, texts are embedded in process as before. Everything else is unchanged: the cache
decides which texts are new and stores each shard as it arrives (so the cluster's vectors reach
Parquet shard by shard), vectors end in the order of the texts, and the stamp is the driver's. A
worker loads each model once and keeps it; a worker whose installed weights differ from the
driver's refuses, naming both revisions (mixing weights is an error, not a warning). Every worker
needs this package and the model packages installed, as the driver has them.

A worker process also lets glibc's malloc keep freed memory for reuse (``keep_freed_memory``):
Dask's nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``, and with that the model ran
about 28 % slower than in process (every tensor of a forward pass mapped from the kernel and
returned to it).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import socket
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from rag_assets.environment import inherited
from rag_assets.lib.embed.models import load_model
from rag_assets.lib.embed.spec import Embedder, ModelSpec

SHARD = 64  # texts per task (Dask) or per actor call (Ray)

_WORKER_MODELS: dict[tuple[ModelSpec, str], Embedder] = {}
log = logging.getLogger(__name__)

# Any of these in the environment turns off glibc's dynamic mmap threshold, fixing it at 128 KiB
# (mallopt(3)): each larger block (every activation tensor of a forward pass) is then mapped from the
# kernel and unmapped when freed, page faults and all.
FIXED_MALLOC_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")
MMAP_THRESHOLD = 32 * 2**20  # the ceiling glibc's dynamic threshold reaches on 64-bit machines
TRIM_THRESHOLD = 64 * 2**20  # freed memory kept for reuse before it is returned: at most this much
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
_malloc_kept: bool | None = None


def keep_freed_memory() -> bool:
    """In a worker process started with fixed malloc thresholds (Dask's nanny sets
    ``MALLOC_TRIM_THRESHOLD_=65536`` for every worker), let glibc keep up to ``TRIM_THRESHOLD`` of
    freed memory for reuse and serve blocks below ``MMAP_THRESHOLD`` from its heap, as a process
    with glibc's defaults ends up doing. Measured here: all-MiniLM-L6-v2 embedded 256 texts in 5.8 s
    under Dask's setting, 4.5 s after this, as in process. Once per process; True when it changed
    the settings, False when none was fixed or the C library is not glibc."""
    global _malloc_kept
    if _malloc_kept is None:
        _malloc_kept = False
        fixed = inherited(FIXED_MALLOC_SETTINGS)
        library = ctypes.util.find_library("c") if fixed else None
        mallopt = getattr(ctypes.CDLL(library), "mallopt", None) if library else None
        if mallopt is not None and mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(_M_TRIM_THRESHOLD,
                                                                                         TRIM_THRESHOLD):
            _malloc_kept = True
            log.info(f"{', '.join(f'{name}={value}' for name, value in fixed.items())} was set: malloc now keeps up to "
                     f"{TRIM_THRESHOLD >> 20} MiB of freed memory for reuse (the model runs about 28 % slower without)")
    return _malloc_kept


def worker_models() -> list[str]:
    """The models this worker process holds loaded (key and onnx folder of each)."""
    return [f"{spec.key} ({onnx_dir or 'pytorch'})" for spec, onnx_dir in _WORKER_MODELS]


def embed_on_worker(spec: ModelSpec, onnx_dir: str, revision: str, texts: Sequence[str],
                    threads: int = 0) -> np.ndarray:
    """Runs on a worker: the shard's vectors, with the model it keeps loaded (on ``threads`` threads;
    0 leaves the worker's setting, which Dask's and Ray's workers set to 1)."""
    keep_freed_memory()
    if threads:
        import torch

        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    key = (spec, onnx_dir)
    if key not in _WORKER_MODELS:
        _WORKER_MODELS[key] = load_model(spec.key, {spec.key: spec}, Path(onnx_dir) if onnx_dir else None)
    embedder = _WORKER_MODELS[key]
    if embedder.revision != revision:
        raise RuntimeError(f"worker {socket.gethostname()} has weights {embedder.revision} of {spec.key}, the driver "
                           f"{revision}: install the same weights on every worker")
    return np.asarray(embedder.embed(list(texts)), dtype=np.float32)


def shards_of(texts: Sequence[str]) -> list[tuple[int, list[str]]]:
    """(offset of its first text, texts) for each shard of ``texts``."""
    return [(start, list(texts[start:start + SHARD])) for start in range(0, len(texts), SHARD)]


class DaskEmbedding:
    """The texts through the Dask cluster whose scheduler is at ``address``, for the driver's model
    (on ``threads`` threads per task; 0 leaves Dask's one)."""

    engine = "dask"

    def __init__(self, address: str, embedder: Embedder, onnx_dir: Path | None = None, threads: int = 0) -> None:
        from distributed import Client

        self.client = Client(address, set_as_default=False, timeout="60s")
        self.embedder, self.onnx_dir, self.threads = embedder, str(onnx_dir or ""), threads
        self.workers = max(1, len(self.client.scheduler_info()["workers"]))

    def embed_shards(self, texts: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(positions in ``texts``, vectors) of each shard, in the order the workers finish them."""
        from distributed import as_completed

        shards = shards_of(texts)
        futures = {self.client.submit(embed_on_worker, self.embedder.spec, self.onnx_dir, self.embedder.revision,
                                      shard, self.threads, pure=False): offset for offset, shard in shards}
        for future in as_completed(list(futures), loop=self.client.loop):
            vectors = future.result()
            yield np.arange(futures[future], futures[future] + len(vectors)), vectors
            future.release()

    def close(self) -> None:
        self.client.close()


class _ModelActor:
    """A Ray Data actor: loads the model once and embeds the batches given to it."""

    def __init__(self, spec: ModelSpec, onnx_dir: str, revision: str, threads: int) -> None:
        self.spec, self.onnx_dir, self.revision, self.threads = spec, onnx_dir, revision, threads

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = embed_on_worker(self.spec, self.onnx_dir, self.revision, [str(text) for text in batch["text"]],
                                  self.threads)
        return {"position": batch["position"], "vector": vectors}


class RayEmbedding:
    """The texts through the Ray cluster at ``address``: Ray Data ``map_batches`` with a
    model-holding actor per ``cpus_per_actor`` CPUs of the cluster (the model's threads)."""

    engine = "ray"

    def __init__(self, address: str, embedder: Embedder, onnx_dir: Path | None = None,
                 cpus_per_actor: int = 1) -> None:
        import ray

        self._connected_here = not ray.is_initialized()
        if self._connected_here:
            ray.init(address=address, log_to_driver=False, logging_level="WARNING", include_dashboard=False)
        self.embedder, self.onnx_dir, self.cpus_per_actor = embedder, str(onnx_dir or ""), cpus_per_actor
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)) // cpus_per_actor)

    def embed_shards(self, texts: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(positions in ``texts``, vectors) of each finished batch, streamed from the actors."""
        import pyarrow as pa
        import ray.data

        if not texts:
            return
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        blocks = [pa.table({"position": pa.array(range(offset, offset + len(shard)), pa.int64()),
                            "text": pa.array(shard, pa.string())}) for offset, shard in shards_of(texts)]
        dataset = ray.data.from_arrow(blocks).map_batches(
            _ModelActor, fn_constructor_args=(self.embedder.spec, self.onnx_dir, self.embedder.revision,
                                              self.cpus_per_actor),
            batch_size=SHARD, batch_format="numpy", num_cpus=self.cpus_per_actor,
            compute=ray.data.ActorPoolStrategy(size=min(self.workers, len(blocks))))  # all from the start
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy", prefetch_batches=0):
            yield np.asarray(batch["position"], dtype=np.int64), np.asarray(batch["vector"], dtype=np.float32)

    def close(self) -> None:
        import ray

        if self._connected_here:
            ray.shutdown()


def cluster_embedding(ray_address: str, dask_scheduler: str, embedder: Embedder, onnx_dir: Path | None = None):
    """The engine the settings name for ``embedder`` (Ray first), or None to embed in process."""
    if ray_address and dask_scheduler:
        raise ValueError("both ray_address and dask_scheduler are set: choose one engine to embed on")
    if ray_address:
        return RayEmbedding(ray_address, embedder, onnx_dir)
    if dask_scheduler:
        return DaskEmbedding(dask_scheduler, embedder, onnx_dir)
    return None
