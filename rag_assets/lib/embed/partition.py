"""One model x strategy partition of embeddings: a vector per chunk, its token costs, and its stamp.

Vectors come from a cache keyed by (weights revision, sha256 of the embedded text): only texts
this revision never embedded are embedded. A partition streams to Parquet: each vector goes to a
memory-mapped scratch file as it is read from the cache or arrives from the cluster, and the
partition's file is written from it ``ROW_GROUP`` rows at a time, so the driver never holds the
partition's vectors in its own memory.

What a partition's texts cost with this model, for the strategies' comparison:

- Tokens are counted with the model's own tokenizer over the embedded ``text``, without the
  special tokens the encoder adds; ``header_tokens`` are those of the header alone.
- A chunk is truncated when its tokens plus the encoder's special tokens exceed the model's window
  (256 word-pieces for all-MiniLM-L6-v2): the encoder silently drops the rest.
- What embedding the index costs in time: the model's rate in tokens a second, measured when a
  partition embeds every one of its texts (none from the cache) and kept beside the model revision's
  cache, so that a partition built from the cache still carries the rate its texts were embedded at.
  The rate rides in the partition file's metadata (``embedding_rate``); the evaluation turns a
  strategy's tokens into seconds with it.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rag_assets.lib.embed.cache import (
    EmbeddingCache,
    TokenVectorCache,
    embed_with_cache,
)
from rag_assets.lib.embed.spec import Embedder
from rag_assets.lib.embed.vectors import distance_identity_gap, norm_deviation
from rag_assets.lib.ingest.chunking import header_of_text
from rag_assets.lib.store.names import inside
from rag_assets.lib.store.object_store import object_store
from rag_assets.lib.store.paths import full_disk_named
from rag_assets.lib.store.schemas import embeddings_schema
from rag_assets.lib.store.stamps import PIPELINE_VERSION

BATCH = 64
ROW_GROUP = 65_536  # rows per row group of an embeddings file: what a streaming reader decodes at once
RATE_KEY = b"rag_assets.embedding_rate"  # the partition file's metadata key of the model's measured rate
RATE_FILE = "embedding_rate.json"  # beside the cache of one model revision


def cache_folder(home: Path, embedder: Embedder) -> Path:
    return inside(Path(home), "embedding_cache", embedder.key, embedder.revision)


def token_cache(home: Path, embedder: Embedder) -> TokenVectorCache:
    """Late interaction's token vectors of this model revision, beside the embedding cache."""
    return TokenVectorCache(inside(Path(home), "token_cache", embedder.key, embedder.revision), embedder.dimension,
                            object_store(home))


def unit_length_findings(table: pa.Table, label: str, tolerance: float) -> tuple[list[str], float, float, int]:
    """What the ``vectors_are_unit_length`` check finds in one partition's table: its problems, the largest
    norm deviation, the largest ``||a-b||^2/2`` against ``1 - cos`` difference, and the vectors looked at
    (none when the model does not normalise). The embeddings asset asks the same before it publishes."""
    if not len(table) or not table.column("normalized")[0].as_py():
        return [], 0.0, 0.0, 0
    vectors = vectors_of(table, table.column("dimension")[0].as_py())
    deviation, gap = norm_deviation(vectors), distance_identity_gap(vectors)
    problems = [f"{label}: largest norm deviation {deviation:.2e} exceeds {tolerance:.0e}"] * (deviation > tolerance)
    problems += [f"{label}: ||a-b||^2/2 and 1 - cos differ by up to {gap:.2e}"] * (gap > tolerance)
    return problems, deviation, gap, len(vectors)


def stored_vectors(path: Path) -> pa.Table:
    """The columns of a written embeddings file that ``unit_length_findings`` reads."""
    return pq.read_table(path, columns=["vector", "dimension", "normalized"])


def vectors_of(table: pa.Table, dimension: int) -> np.ndarray:
    """The ``vector`` column of an embeddings table as a float32 (rows, dimension) array."""
    flat = np.asarray(table.column("vector").combine_chunks().flatten().to_numpy(), dtype=np.float32)
    return flat.reshape(len(table), dimension)


def vector_blocks(path: Path, dimension: int, block_rows: int) -> Iterator[np.ndarray]:
    """The ``vector`` column of a stored embeddings file as float32 arrays of at most ``block_rows``
    rows, read a batch at a time: for scoring a collection larger than memory (``top_k_of_blocks``).
    Arrow decodes a whole row group at once, so memory is bounded by the file's row-group size too."""
    for batch in pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=block_rows, columns=["vector"],
                                                                     use_threads=False):
        flat = np.asarray(batch.column(0).flatten().to_numpy(), dtype=np.float32)
        yield flat.reshape(batch.num_rows, dimension)


def write_embeddings(
    destination: Path, chunks: pa.Table, embedder: Embedder, strategy: str, home: Path,
    progress: Callable[[int, int], None] | None = None, cluster=None,
) -> dict:
    """Embeds a partition into the Parquet file ``destination``: vectors, tokens per chunk, header
    tokens, truncation, stamp. Returns its figures.

    Vectors go to a memory-mapped scratch file beside ``destination`` (unlinked from the start, so
    nothing of it is left however the run ends) as they are read from the cache or arrive; the file
    is then written ``ROW_GROUP`` rows at a time. With ``cluster`` (see ``cluster_embedding``: Ray or
    Dask), the texts the cache lacks are embedded on its workers."""
    texts = chunks.column("text").to_pylist()
    cache = EmbeddingCache(cache_folder(home, embedder), embedder.dimension, object_store(home))
    schema = embeddings_schema(embedder.dimension)
    with tempfile.TemporaryFile(dir=Path(destination).parent, prefix=".vectors-") as scratch:
        if texts:
            # reserved before it is mapped: a full disk is an error here, not a SIGBUS at a later write
            with full_disk_named(Path(destination).parent / ".vectors-*"):
                os.posix_fallocate(scratch.fileno(), 0, len(texts) * embedder.dimension * 4)
        vectors = (np.memmap(scratch, dtype=np.float32, mode="r+", shape=(len(texts), embedder.dimension))
                   if texts else np.zeros((0, embedder.dimension), dtype=np.float32))
        started = time.perf_counter()
        _, embedded, reused = embed_with_cache(texts, embedder.embed, cache, BATCH,
                                               progress or (lambda done, total: None),
                                               embed_shards=cluster.embed_shards if cluster else None, out=vectors)
        seconds = time.perf_counter() - started
        headers = [header_of_text(text, span_start, end) for text, span_start, end in
                   zip(texts, chunks.column("span_start").to_pylist(), chunks.column("end").to_pylist())]
        tokens = embedder.count_tokens(texts)
        header_tokens = [count if header else 0 for header, count in zip(headers, embedder.count_tokens(headers))]
        first = chunks.slice(0, 1).to_pylist()[0] if len(chunks) else {}
        stamp = {
            "model": embedder.key, "revision": embedder.revision, "dimension": embedder.dimension,
            "normalized": embedder.normalized, "pipeline_version": PIPELINE_VERSION,
            "extractor_version": first.get("extractor_version"), "snapshot_id": first.get("snapshot_id"),
            "strategy": strategy,
        }
        rows = pa.table({
            "chunk_id": chunks.column("chunk_id"),
            "tokens": pa.array(tokens, pa.int64()),
            "header_tokens": pa.array(header_tokens, pa.int64()),
            # the encoder silently drops what lies past its window
            "truncated": pa.array([truncated(n, embedder.special_tokens, embedder.window) for n in tokens], pa.bool_()),
            **{name: pa.array([value] * len(texts), schema.field(name).type) for name, value in stamp.items()},
        })
        embedded_on = f"{cluster.engine} cluster ({cluster.workers} workers)" if cluster else "this process"
        distinct = dict(zip(texts, tokens))  # a text repeated in the partition is embedded once
        rate = measured_rate(cache_folder(home, embedder), sum(distinct.values()), seconds,
                             len(distinct) - embedded, embedded_on)
        if rate:
            schema = schema.with_metadata({RATE_KEY: json.dumps(rate).encode()})
        with full_disk_named(destination), pq.ParquetWriter(destination, schema) as writer:
            for start in range(0, max(len(texts), 1), ROW_GROUP):
                block = np.ascontiguousarray(vectors[start:start + ROW_GROUP])  # one row group in memory
                vector = pa.FixedSizeListArray.from_arrays(pa.array(block.reshape(-1), pa.float32()),
                                                           embedder.dimension)
                writer.write_table(rows.slice(start, ROW_GROUP).add_column(1, schema.field("vector"), vector),
                                   row_group_size=ROW_GROUP)
        del vectors  # the map closes before its file
    stats = token_stats(tokens, header_tokens, embedder.special_tokens, embedder.window)
    return {
        "chunks": len(texts), "texts_embedded": embedded, "texts_reused": reused, "seconds": round(seconds, 2),
        "embedded_per_second": round(embedded / seconds, 1) if embedded and seconds else 0.0,
        **{k: v for k, v in stats.items() if k != "window"}, "window": embedder.window or "none",
        "header_token_share": round(stats["header_token_share"], 4), "stamp": stamp,
        "runtime": getattr(embedder, "runtime", "native"),
        "embedded_on": embedded_on,
        "embedding_tokens_per_second": rate["tokens_per_second"] if rate else "not measured",
        "damaged_cache_shards": cache.discarded,
    }


def measured_rate(folder: Path, tokens: int, seconds: float, reused: int, embedded_on: str) -> dict | None:
    """The model revision's embedding rate: this partition's (``tokens`` of its distinct texts embedded in
    ``seconds``) when it embedded every text (``reused``, from the cache, is 0) and
    covered at least as many tokens as the rate kept in ``folder``, which it then replaces; else the kept
    one; None when no partition of this revision ever embedded all its texts here."""
    record = Path(folder) / RATE_FILE
    kept = None
    try:
        kept = json.loads(record.read_text())
    except (OSError, ValueError):
        pass
    if reused == 0 and tokens > 0 and seconds > 0 and (kept is None or tokens >= kept.get("tokens", 0)):
        kept = {"tokens_per_second": round(tokens / seconds, 1), "tokens": tokens, "seconds": round(seconds, 3),
                "embedded_on": embedded_on}
        record.parent.mkdir(parents=True, exist_ok=True)
        scratch = record.with_name(f".{RATE_FILE}.{os.getpid()}")
        scratch.write_text(json.dumps(kept))
        scratch.replace(record)
    return kept


def embedding_rate(path: Path) -> dict | None:
    """The rate an embeddings partition file carries (``measured_rate``), or None."""
    metadata = pq.read_schema(path).metadata or {}
    return json.loads(metadata[RATE_KEY]) if RATE_KEY in metadata else None


def embed_chunks(
    chunks: pa.Table, embedder: Embedder, strategy: str, home: Path, progress: Callable[[int, int], None] | None = None,
    cluster=None,
) -> tuple[pa.Table, dict]:
    """(the embeddings table, its figures), through ``write_embeddings`` to a temporary file: the
    partition in memory, for callers that want it so."""
    Path(home).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=home, prefix=".embeddings-") as folder:
        figures = write_embeddings(Path(folder) / "embeddings.parquet", chunks, embedder, strategy, home, progress,
                                   cluster)
        return pq.read_table(Path(folder) / "embeddings.parquet"), figures


def truncated(count: int, special_tokens: int, window: int | None) -> bool:
    """Whether the encoder drops part of a text of ``count`` tokens (a model without a window never does)."""
    return window is not None and count + special_tokens > window


def token_stats(tokens: Sequence[int], header_tokens: Sequence[int], special_tokens: int, window: int | None) -> dict:
    total = sum(tokens)
    headers = sum(header_tokens)
    return {
        "tokens_embedded": total,
        "header_tokens": headers,
        "header_token_share": headers / total if total else 0.0,
        "truncated_chunks": sum(truncated(count, special_tokens, window) for count in tokens),
        "window": window,
    }
