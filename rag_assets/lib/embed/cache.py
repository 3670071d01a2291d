"""A content-hash cache of embeddings, keyed by (model revision, sha256 of the exact embedded text).

Re-materialising after no change embeds nothing; after one document changes, only its new chunks
are embedded. The cache of one model revision is a folder of Parquet shards (text hash, vector);
each write adds a shard through a temporary file and a rename, so concurrent partitions never
corrupt it. Shards are compacted by size tier, as a log-structured store does: more than
``COMPACT_AFTER`` shards of one tier are merged into one shard of the next, so each vector is
rewritten about log(n) times, never once per write, and the folder holds a few dozen shards at a
million vectors. Reads and merges go a record batch at a time: no step holds the whole cache. The
token vectors late interaction needs are kept the same way (``TokenVectorCache``), in float16.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rag_assets.lib.store.object_store import ObjectStore, publish
from rag_assets.lib.store.paths import full_disk_named

COMPACT_AFTER = 16  # shards of one tier before they are merged into one of the next
READ_ROWS = 65_536  # rows per record batch read from a shard
log = logging.getLogger(__name__)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tier_of(shard: Path) -> int:
    """A shard's tier, from its name ``<tier>-<id>.parquet``: 0 for a write, t + 1 for a merge of tier t.
    Shards named before tiers existed (``<id>.parquet``) count as tier 0."""
    tier, _, rest = shard.stem.partition("-")
    return int(tier) if rest and tier.isdigit() else 0


class ShardFolder:
    """A folder of Parquet shards that only grows: each write adds a shard through a temporary file
    and a rename, so concurrent writers never corrupt it; more than ``COMPACT_AFTER`` shards of one
    tier are merged into one shard of the next tier.

    With an object store (``store``), the store's shards are the cache: a read first brings the
    folder in line with them (new shards downloaded, shards merged away elsewhere dropped), each
    write is uploaded before it is renamed into place, and a merge removes the merged shards there
    too. Shards are written once and never changed, so each is downloaded once per machine."""

    def __init__(self, folder: Path, store: ObjectStore | None = None, group_rows: int = READ_ROWS) -> None:
        self.folder = Path(folder)
        self.store = store
        self.group_rows = group_rows  # rows per Parquet row group written: the least a lookup reads
        self.discarded: list[str] = []  # the damaged shards removed, each with why (for a warning of the caller's)

    def shards(self) -> list[Path]:
        return sorted(self.folder.glob("*.parquet")) if self.folder.is_dir() else []

    def sync(self) -> None:
        """The folder as the object store holds it: its shards fetched; a shard here that came from
        the store and is gone there (merged by another machine) removed; a shard here that never
        went to the store (written before one was configured) uploaded."""
        if self.store is None:
            return
        remote = {shard for shard in self.store.files(self.folder, ".parquet") if shard.parent == self.folder}
        for shard in self.shards():
            if shard not in remote:
                if self.store.is_copy(shard):
                    self.store.drop_copy(shard)
                else:
                    self.store.publish(shard, shard)
        for shard in sorted(remote):
            self.store.fetch(shard)

    def tables(self, keys: set[str]) -> Iterator[pa.Table]:
        """The rows whose ``text_sha256`` is in ``keys``, a row group of a shard at a time. The key
        column is read first; only the row groups holding a wanted key are read whole, so a lookup
        of a few keys reads a few row groups, not the cache."""
        wanted = pa.array(sorted(keys), pa.string())
        self.sync()
        for shard in self.shards():
            try:
                for group in self._groups_holding(shard, wanted):
                    selected = group.filter(pc.is_in(group.column("text_sha256"), value_set=wanted))
                    if selected.num_rows:
                        yield selected
            except FileNotFoundError:  # merged away by a concurrent writer; its rows live on in the merge
                continue

    def _groups_holding(self, shard: Path, wanted: pa.Array) -> Iterator[pa.Table]:
        """The row groups of ``shard`` holding one of the ``wanted`` keys. A shard that cannot be read
        is discarded like in ``_batches``."""
        try:
            reader = pq.ParquetFile(shard, pre_buffer=False)
            metadata = reader.metadata
            keys = reader.read(columns=["text_sha256"], use_threads=False).column("text_sha256")
            hits = pc.is_in(keys, value_set=wanted)
            if not pc.any(hits).as_py():
                return
            start = 0
            for group in range(metadata.num_row_groups):
                rows = metadata.row_group(group).num_rows
                if pc.any(hits.slice(start, rows)).as_py():
                    yield reader.read_row_group(group, use_threads=False)
                start += rows
        except FileNotFoundError:
            raise
        except (pa.ArrowInvalid, OSError) as error:
            self._discard(shard, error)

    def append(self, table: pa.Table) -> None:
        self._write([table], tier=0)
        tier = 0
        while True:  # a merge may fill the next tier: cascade
            same_tier = [shard for shard in self.shards() if tier_of(shard) == tier]
            if len(same_tier) <= COMPACT_AFTER or not self._merge(same_tier, tier + 1):
                return
            tier += 1

    def _merge(self, shards: list[Path], tier: int) -> bool:
        """One shard of ``tier`` holding the rows of ``shards``, written a batch at a time; the merged
        shards are removed. False when a concurrent writer is merging them (a shard vanished)."""
        try:  # a damaged shard is discarded by _batches and merged as empty
            self._write((pa.Table.from_batches([batch]) for shard in shards for batch in self._batches(shard)), tier)
        except FileNotFoundError:
            return False
        for shard in shards:
            self._remove(shard)
        return True

    def _batches(self, shard: Path) -> Iterator[pa.RecordBatch]:
        """A shard's rows, a record batch at a time. A shard that cannot be read (truncated,
        overwritten) is removed with a warning, so that what it held is computed again.
        FileNotFoundError passes."""
        try:
            reader = pq.ParquetFile(shard, pre_buffer=False)
            yield from reader.iter_batches(batch_size=READ_ROWS, use_threads=False)
        except FileNotFoundError:
            raise
        except (pa.ArrowInvalid, OSError) as error:
            self._discard(shard, error)

    def _discard(self, shard: Path, error: Exception) -> None:
        said = f"discarded a damaged cache shard {shard} ({error}); its entries are computed again"
        log.warning(said)
        self.discarded.append(said)
        self._remove(shard)

    def _remove(self, shard: Path) -> None:
        if self.store is not None:
            self.store.remove(shard)
            self.store.drop_copy(shard)
        shard.unlink(missing_ok=True)

    def size_bytes(self) -> int:
        return sum(shard.stat().st_size for shard in self.shards())

    def _write(self, tables: Iterable[pa.Table], tier: int) -> None:
        """One shard of ``tier`` from ``tables`` (written one after the other), through a temporary
        file and a rename."""
        self.folder.mkdir(parents=True, exist_ok=True)
        name = uuid.uuid4().hex
        temporary = self.folder / f".{name}.tmp"
        try:
            with full_disk_named(self.folder):
                writer = None
                try:
                    for table in tables:
                        writer = writer or pq.ParquetWriter(temporary, table.schema)
                        writer.write_table(table, row_group_size=self.group_rows)
                finally:
                    if writer is not None:
                        writer.close()
                if writer is not None:
                    publish(self.store, temporary, self.folder / f"{tier}-{name}.parquet")
        except BaseException:  # a full disk, or stopped: no half shard is left behind
            temporary.unlink(missing_ok=True)
            raise


class _KeyedCache:
    """Rows keyed by the sha256 of a text, for one model revision, in a ``ShardFolder`` (kept in an
    object store too when one is given)."""

    group_rows = READ_ROWS

    def __init__(self, folder: Path, dimension: int, store: ObjectStore | None = None) -> None:
        self.folder = Path(folder)
        self.dimension = dimension
        self._shards = ShardFolder(self.folder, store, self.group_rows)

    def size_bytes(self) -> int:
        return self._shards.size_bytes()

    @property
    def discarded(self) -> list[str]:
        """A warning for each damaged shard removed so far (truncated, overwritten): its rows are computed again."""
        return list(self._shards.discarded)


class EmbeddingCache(_KeyedCache):
    def fill(self, positions: dict[str, list[int]], out: np.ndarray) -> set[str]:
        """Writes the cached vector of each hash in ``positions`` into ``out`` at that hash's positions,
        a record batch at a time (the cache is never held whole); returns the hashes found."""
        found: set[str] = set()
        for table in self._shards.tables(set(positions)):
            keys = table.column("text_sha256").to_pylist()
            vectors = np.asarray(table.column("vector").combine_chunks().flatten().to_numpy(), dtype=np.float32)
            for key, vector in zip(keys, vectors.reshape(len(keys), self.dimension)):
                out[positions[key]] = vector
            found.update(keys)
        return found

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

    A row holds a chunk's whole token matrix (tens of kilobytes), so row groups are small: asking
    one question reads the row groups of its few candidates, not the cache.
    """

    group_rows = 64

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
    out: np.ndarray | None = None,
) -> tuple[np.ndarray, int, int]:
    """Vectors for ``texts``: reused from the cache where the exact text was embedded before by
    this model revision, embedded (in batches, reporting progress) and cached otherwise.

    ``embed_shards`` (a cluster's) takes the texts to embed and yields (their positions, vectors)
    shard by shard in any order; each shard is cached as it arrives. By default ``embed`` runs here
    on batches of ``batch_size``.

    Each vector is written into ``out``, a (len(texts), dimension) float32 array, as it is read from
    the cache or arrives: given a memory map of a scratch file, no copy of all vectors is held in
    memory. By default a new array.

    Returns (``out``, texts embedded now, texts reused).
    """
    out = np.empty((len(texts), cache.dimension), dtype=np.float32) if out is None else out
    positions: dict[str, list[int]] = defaultdict(list)
    for position, text in enumerate(texts):
        positions[text_hash(text)].append(position)
    found = cache.fill(positions, out)
    keys = [key for key in positions if key not in found]
    pending = [texts[positions[key][0]] for key in keys]
    shards = embed_shards(pending) if embed_shards else (
        (np.arange(offset, min(offset + batch_size, len(pending))), embed(pending[offset: offset + batch_size]))
        for offset in range(0, len(pending), batch_size))
    arrived: set[str] = set()
    for shard, vectors in shards:
        if len(shard) != len(vectors):
            raise RuntimeError(f"a shard of {len(shard)} texts came back with {len(vectors)} vectors")
        batch_keys = [keys[position] for position in shard]
        cache.add(batch_keys, vectors)
        for key, vector in zip(batch_keys, np.asarray(vectors, dtype=np.float32)):
            out[positions[key]] = vector
        arrived.update(batch_keys)
        progress(len(arrived), len(pending))
    if len(arrived) < len(keys):
        raise RuntimeError(f"{len(keys) - len(arrived)} of {len(pending)} texts came back without a vector")
    return out, len(pending), len(texts) - len(pending)
