"""A content-hash cache of embeddings, keyed by (model revision, sha256 of the exact embedded text).

Re-materialising after no change embeds nothing; after one document changes, only its new chunks
are embedded. The cache of one model revision is a folder of Parquet shards (text hash, vector);
each write adds a shard through a temporary file and a rename, so concurrent partitions never
corrupt it, and many shards are compacted into one. The token vectors late interaction needs are
kept the same way (``TokenVectorCache``), in float16.
"""

from __future__ import annotations

import hashlib
import logging
import os
import uuid
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rag_assets.lib.paths import full_disk_named

COMPACT_AFTER = 16
log = logging.getLogger(__name__)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ShardFolder:
    """A folder of Parquet shards that only grows: each write adds a shard through a temporary file
    and a rename, so concurrent writers never corrupt it; more than ``COMPACT_AFTER`` shards are
    merged into one."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def shards(self) -> list[Path]:
        return sorted(self.folder.glob("*.parquet")) if self.folder.is_dir() else []

    def tables(self, keys: set[str]):
        """The rows whose ``text_sha256`` is in ``keys``, one table per shard."""
        for shard in self.shards():
            try:
                table = self._read(shard)
            except FileNotFoundError:  # compacted away by a concurrent writer; its rows live on
                continue
            if table is None:
                continue
            mask = pc.is_in(table.column("text_sha256"), value_set=pa.array(sorted(keys), pa.string()))
            yield table.filter(mask)

    def append(self, table: pa.Table) -> None:
        self._write(table)
        shards = self.shards()
        if len(shards) > COMPACT_AFTER:
            try:
                readable = [table for table in map(self._read, shards) if table is not None]
            except FileNotFoundError:  # a concurrent writer is compacting
                return
            merged = pa.concat_tables(readable)
            self._write(merged)
            for shard in shards:
                shard.unlink(missing_ok=True)

    def _read(self, shard: Path) -> pa.Table | None:
        """A shard's rows; None for a shard that cannot be read (truncated, overwritten), which is
        removed with a warning, so that what it held is computed again. FileNotFoundError passes."""
        try:
            return pq.read_table(shard)
        except FileNotFoundError:
            raise
        except (pa.ArrowInvalid, OSError) as error:
            log.warning(f"discarded a damaged cache shard {shard} ({error}); its entries are computed again")
            shard.unlink(missing_ok=True)
            return None

    def size_bytes(self) -> int:
        return sum(shard.stat().st_size for shard in self.shards())

    def _write(self, table: pa.Table) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = uuid.uuid4().hex
        temporary = self.folder / f".{name}.tmp"
        try:
            with full_disk_named(self.folder):
                pq.write_table(table, temporary)
                os.replace(temporary, self.folder / f"{name}.parquet")
        except BaseException:  # a full disk, or stopped: no half shard is left behind
            temporary.unlink(missing_ok=True)
            raise


class _KeyedCache:
    """Rows keyed by the sha256 of a text, for one model revision, in a ``ShardFolder``."""

    def __init__(self, folder: Path, dimension: int) -> None:
        self.folder = Path(folder)
        self.dimension = dimension
        self._shards = ShardFolder(self.folder)

    def size_bytes(self) -> int:
        return self._shards.size_bytes()


class EmbeddingCache(_KeyedCache):
    def lookup(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for table in self._shards.tables(set(hashes)):
            keys = table.column("text_sha256").to_pylist()
            vectors = np.asarray(table.column("vector").combine_chunks().flatten().to_numpy(), dtype=np.float32)
            found.update(zip(keys, vectors.reshape(len(keys), self.dimension)))
        return found

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        if not len(hashes):
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        self._shards.append(pa.table({
            "text_sha256": pa.array(list(hashes), pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), self.dimension),
        }))


TOKEN_DTYPE = np.float16


class TokenVectorCache(_KeyedCache):
    """The token vectors of texts (late interaction's chunk side), keyed like the embedding cache
    and kept beside it, so that a run in another process computes none of them again.

    Stored as float16 (half the bytes of float32). Token vectors are always rounded to float16 when
    first obtained, whether computed or read back, so a score does not depend on where its vectors
    came from.
    """

    def lookup(self, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for table in self._shards.tables(set(hashes)):
            for key, blob in zip(table.column("text_sha256").to_pylist(), table.column("vectors").to_pylist()):
                found[key] = np.frombuffer(blob, dtype=TOKEN_DTYPE).reshape(-1, self.dimension)
        return found

    def add(self, vectors_by_hash: dict[str, np.ndarray]) -> None:
        if not vectors_by_hash:
            return
        self._shards.append(pa.table({
            "text_sha256": pa.array(list(vectors_by_hash), pa.string()),
            "tokens": pa.array([len(v) for v in vectors_by_hash.values()], pa.int32()),
            "vectors": pa.array([np.ascontiguousarray(v, dtype=TOKEN_DTYPE).tobytes()
                                 for v in vectors_by_hash.values()], pa.large_binary()),
        }))


def embed_with_cache(
    texts: Sequence[str], embed, cache: EmbeddingCache, batch_size: int = 64, progress=lambda done, total: None,
    embed_shards: Callable[[list[str]], Iterable[tuple[np.ndarray, np.ndarray]]] | None = None,
) -> tuple[np.ndarray, int, int]:
    """Vectors for ``texts``: reused from the cache where the exact text was embedded before by
    this model revision, embedded (in batches, reporting progress) and cached otherwise.

    ``embed_shards`` (a cluster's) takes the texts to embed and yields (their positions, vectors)
    shard by shard in any order; each shard is cached as it arrives. By default ``embed`` runs here
    on batches of ``batch_size``.

    Returns (vectors in the order of texts, texts embedded now, texts reused).
    """
    hashes = [text_hash(text) for text in texts]
    known = cache.lookup(hashes)
    todo: dict[str, str] = {}
    for key, text in zip(hashes, texts):
        if key not in known:
            todo.setdefault(key, text)
    keys, pending = list(todo), list(todo.values())
    shards = embed_shards(pending) if embed_shards else (
        (np.arange(offset, min(offset + batch_size, len(pending))), embed(pending[offset: offset + batch_size]))
        for offset in range(0, len(pending), batch_size))
    done = 0
    for positions, vectors in shards:
        if len(positions) != len(vectors):
            raise RuntimeError(f"a shard of {len(positions)} texts came back with {len(vectors)} vectors")
        batch_keys = [keys[position] for position in positions]
        cache.add(batch_keys, vectors)
        known.update(zip(batch_keys, vectors))
        done += len(batch_keys)
        progress(done, len(pending))
    missing = [key for key in keys if key not in known]
    if missing:
        raise RuntimeError(f"{len(missing)} of {len(pending)} texts came back without a vector")
    if not texts:
        return np.zeros((0, cache.dimension), dtype=np.float32), 0, 0
    return np.stack([known[key] for key in hashes]).astype(np.float32), len(pending), len(texts) - len(pending)
