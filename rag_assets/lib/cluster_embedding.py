"""Embedding texts on a Dask cluster: shards of texts to workers that each hold the model.

``RAG_ASSETS_DASK_SCHEDULER`` (a scheduler address such as ``tcp://10.0.0.5:8786``) makes the
`embeddings` asset hand its new texts to the cluster; without it, they are embedded in process as
before. Everything else is unchanged: the cache decides which texts are new, vectors come back in the
order of the texts, and the stamp is the driver's. A worker loads each model once and keeps it; a
worker whose installed weights differ from the driver's refuses, naming both revisions (mixing
weights is an error, not a warning).

Dask's `distributed`; the issue prefers Ray (which installs here too: ray 2.60.0 has a wheel), and a
Ray path (Ray Data ``map_batches`` with model-holding actors) is not built yet.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Sequence

import numpy as np

from rag_assets.lib.embedding import Embedder, ModelSpec, load_model

SCHEDULER_ENV_VAR = "RAG_ASSETS_DASK_SCHEDULER"
SHARD = 64  # texts per task

_WORKER_MODELS: dict[tuple[ModelSpec, str], Embedder] = {}


def embed_on_worker(spec: ModelSpec, onnx_dir: str, revision: str, texts: Sequence[str]) -> np.ndarray:
    """Runs on a worker: the shard's vectors, with the model it keeps loaded."""
    key = (spec, onnx_dir)
    if key not in _WORKER_MODELS:
        _WORKER_MODELS[key] = load_model(spec.key, {spec.key: spec}, Path(onnx_dir) if onnx_dir else None)
    embedder = _WORKER_MODELS[key]
    if embedder.revision != revision:
        raise RuntimeError(f"worker {socket.gethostname()} has weights {embedder.revision} of {spec.key}, the driver "
                           f"{revision}: install the same weights on every worker")
    return np.asarray(embedder.embed(list(texts)), dtype=np.float32)


class ClusterEmbedding:
    """``embed(texts)`` through the cluster at ``address``, for one loaded model (the driver's)."""

    def __init__(self, address: str, embedder: Embedder, onnx_dir: Path | None = None) -> None:
        from distributed import Client

        self.client = Client(address, set_as_default=False, timeout="60s")
        self.embedder, self.onnx_dir = embedder, str(onnx_dir or "")
        self.workers = max(1, len(self.client.scheduler_info()["workers"]))

    @property
    def batch_size(self) -> int:
        """Texts per call, so that every worker has shards to work on."""
        return SHARD * self.workers * 2

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        shards = [list(texts[start:start + SHARD]) for start in range(0, len(texts), SHARD)]
        if not shards:
            return np.zeros((0, self.embedder.dimension), np.float32)
        futures = self.client.map(embed_on_worker, [self.embedder.spec] * len(shards),
                                  [self.onnx_dir] * len(shards), [self.embedder.revision] * len(shards), shards,
                                  pure=False)
        return np.vstack(self.client.gather(futures))

    def close(self) -> None:
        self.client.close()
