"""A trace row per ask, so a complaint can be diagnosed: was the right chunk retrieved (retrieval),
retrieved but not sent or not cited (generation)?

Traces live in their own DuckDB file (``traces.duckdb`` in the storage folder, table
``ask_traces``): asking never waits for, or blocks, the one writer of ``metrics.duckdb``. A trace that
cannot be written at once is queued beside it (``traces.pending/``), never a lost answer.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from rag_assets.lib.answer.ask import Answer
from rag_assets.lib.store.database import damage_of, is_lock, rename_damaged

TRACES_FILE = "traces.duckdb"


def traces_path(home: Path) -> Path:
    return Path(home) / TRACES_FILE


TRACE_SCHEMA = pa.schema([
    ("asked_at", pa.timestamp("us")), ("question", pa.string()), ("model", pa.string()), ("revision", pa.string()),
    ("strategy", pa.string()), ("retriever", pa.string()), ("cut", pa.float64()), ("k", pa.int32()),
    ("budget", pa.int32()), ("refused", pa.bool_()),
    ("retrieved", pa.list_(pa.struct([("chunk_id", pa.string()), ("distance", pa.float64())]))),
    ("sources", pa.list_(pa.struct([("number", pa.int32()), ("chunk_id", pa.string()), ("doc_id", pa.string()),
                                    ("locator", pa.string()), ("distance", pa.float64()), ("tokens", pa.int32()),
                                    ("truncated", pa.bool_())]))),
    ("cited", pa.list_(pa.int32())), ("latency_ms", pa.float64()),
])


def trace_row(answer: Answer, cited: Sequence[int] | None = None) -> pa.Table:
    return pa.Table.from_pylist([{
        "asked_at": datetime.now(timezone.utc).replace(tzinfo=None), "question": answer.question,
        "model": answer.model, "revision": answer.revision, "strategy": answer.strategy,
        "retriever": answer.retriever, "cut": answer.cut, "k": answer.k, "budget": answer.budget,
        "refused": answer.refused,
        "retrieved": [{"chunk_id": c, "distance": d} for c, d in answer.retrieved],
        "sources": [{"number": s.number, "chunk_id": s.chunk_id, "doc_id": s.doc_id, "locator": s.locator,
                     # ask quotes whole chunks only (0.4.0): the field stays so that earlier traces and
                     # newer ones share one table
                     "distance": s.distance, "tokens": s.tokens, "truncated": False} for s in answer.sources],
        "cited": list(cited) if cited is not None else None, "latency_ms": answer.latency_ms,
    }], schema=TRACE_SCHEMA)


def _queued(pending: Path) -> tuple[list[tuple[Path, pa.Table]], list[str]]:
    """The traces queued by earlier asks, and a warning for each queued file that cannot be read (renamed
    ``.damaged``, kept: it would block every later write)."""
    queued, said = [], []
    for path in sorted(pending.glob("*.parquet")) if pending.is_dir() else []:
        try:
            queued.append((path, pq.read_table(path).cast(TRACE_SCHEMA)))
        except (OSError, pa.ArrowException) as error:
            path.rename(path.with_name(path.name + ".damaged"))
            said.append(f"a queued trace {path} could not be read ({str(error).splitlines()[0]}); kept as "
                        f"{path.name}.damaged")
    return queued, said


def _write(home: Path, rows: pa.Table, attempts: int) -> str | None:
    """Append ``rows`` to ``ask_traces``; None when written, else why not. Waits, bounded, while another
    process holds the file."""
    failure = None
    for _ in range(attempts):
        try:
            with duckdb.connect(str(traces_path(home))) as connection:
                connection.register("incoming_trace", rows)
                connection.execute("CREATE TABLE IF NOT EXISTS ask_traces AS SELECT * FROM incoming_trace LIMIT 0")
                connection.execute("INSERT INTO ask_traces BY NAME SELECT * FROM incoming_trace")
            return None
        except (duckdb.Error, OSError) as error:
            failure = str(error).splitlines()[0]
            if not isinstance(error, duckdb.IOException) or not is_lock(error):
                break  # not another process holding it: waiting will not help
            time.sleep(0.1)
    return failure


def record_trace(home: Path, answer: Answer, cited: Sequence[int] | None = None, attempts: int = 20) -> str | None:
    """Append one trace row (``asked_at`` in UTC), and any queued before it. A damaged ``traces.duckdb`` is set
    aside as ``metrics.duckdb`` is (renamed ``.damaged-<time>``, kept) and a new one started. When it cannot be
    written (a reader holds it, the folder is read-only) the row is queued in ``traces.pending/`` and written by
    the next ask that can. Returns a warning when anything of this was done (None when simply written); asking
    never fails for its trace."""
    pending = traces_path(home).with_name("traces.pending")
    queued, said = _queued(pending)
    rows = pa.concat_tables([*(table for _, table in queued), trace_row(answer, cited)])
    failure = _write(home, rows, attempts)
    if failure is not None and traces_path(home).exists():
        reason = damage_of(traces_path(home))
        if reason is not None:
            aside = rename_damaged(traces_path(home))
            said.append(f"{traces_path(home)} was damaged ({reason}); it is kept as {aside.name} and a new one "
                        f"holds this trace{f' and the {len(queued)} queued' if queued else ''}")
            failure = _write(home, rows, attempts)
    if failure is None:
        for path, _ in queued:
            path.unlink(missing_ok=True)
        return "; ".join(said) or None
    try:
        pending.mkdir(exist_ok=True)
        pq.write_table(trace_row(answer, cited), pending / f"{time.time_ns()}-{os.getpid()}.parquet")
    except OSError as error:
        return "; ".join([*said, f"the trace of this question was not recorded in {traces_path(home)} ({failure}) "
                                  f"nor queued ({error})"])
    return "; ".join([*said, f"the trace of this question is queued in {pending} ({traces_path(home)}: {failure}); "
                             "the next ask writes it"])
