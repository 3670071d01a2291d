"""A content-hash cache of embeddings, keyed by (model revision, sha256 of the exact embedded text).

Re-materialising after no change embeds nothing; after one document changes, only its new chunks
are embedded. The cache of one model revision is a folder of Parquet shards (text hash, vector);
each write adds a shard through a temporary file and a rename, so concurrent partitions never
corrupt it, and many shards are compacted into one.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

COMPACT_AFTER = 16


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, folder: Path, dimension: int) -> None:
        self.folder = Path(folder)
        self.dimension = dimension

    def _shards(self) -> list[Path]:
        return sorted(self.folder.glob("*.parquet")) if self.folder.is_dir() else []

    def lookup(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        wanted = set(hashes)
        found: dict[str, np.ndarray] = {}
        for shard in self._shards():
            try:
                table = pq.read_table(shard)
            except FileNotFoundError:  # compacted away by a concurrent writer; its rows live on
                continue
            keys = table.column("text_sha256").to_pylist()
            vectors = np.asarray(table.column("vector").combine_chunks().flatten().to_numpy(), dtype=np.float32)
            vectors = vectors.reshape(len(keys), self.dimension)
            for index, key in enumerate(keys):
                if key in wanted:
                    found[key] = vectors[index]
        return found

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        if not len(hashes):
            return
        self._write(list(hashes), np.asarray(vectors, dtype=np.float32))
        shards = self._shards()
        if len(shards) > COMPACT_AFTER:
            try:
                merged = pa.concat_tables([pq.read_table(shard) for shard in shards])
            except FileNotFoundError:  # a concurrent writer is compacting
                return
            self._write_table(merged)
            for shard in shards:
                shard.unlink(missing_ok=True)

    def _write(self, hashes: list[str], vectors: np.ndarray) -> None:
        self._write_table(pa.table({
            "text_sha256": pa.array(hashes, pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), self.dimension),
        }))

    def _write_table(self, table: pa.Table) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = uuid.uuid4().hex
        temporary = self.folder / f".{name}.tmp"
        pq.write_table(table, temporary)
        os.replace(temporary, self.folder / f"{name}.parquet")


def embed_with_cache(
    texts: Sequence[str], embed, cache: EmbeddingCache, batch_size: int = 64, progress=lambda done, total: None
) -> tuple[np.ndarray, int, int]:
    """Vectors for ``texts``: reused from the cache where the exact text was embedded before by
    this model revision, embedded (in batches, reporting progress) and cached otherwise.

    Returns (vectors in the order of texts, texts embedded now, texts reused).
    """
    hashes = [text_hash(text) for text in texts]
    known = cache.lookup(hashes)
    todo: dict[str, str] = {}
    for key, text in zip(hashes, texts):
        if key not in known:
            todo.setdefault(key, text)
    keys, pending = list(todo), list(todo.values())
    for offset in range(0, len(pending), batch_size):
        vectors = embed(pending[offset: offset + batch_size])
        batch_keys = keys[offset: offset + batch_size]
        cache.add(batch_keys, vectors)
        known.update(zip(batch_keys, vectors))
        progress(min(offset + batch_size, len(pending)), len(pending))
    if not texts:
        return np.zeros((0, cache.dimension), dtype=np.float32), 0, 0
    return np.stack([known[key] for key in hashes]).astype(np.float32), len(pending), len(texts) - len(pending)
