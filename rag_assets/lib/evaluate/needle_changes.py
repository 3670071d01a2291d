"""The needles a corpus edit moved or lost, kept with each evaluation run (``needle_changes`` in metrics.duckdb)
and said in the verdict and on the page: the evaluation went on without the lost ones, and a reader must know
which and why. And the needles each run asked (``run_needles``: id and a hash of the folded text), so that two
runs are compared only on the needles present and unchanged in both.

The evaluation set's file carries them (``relocation.with_changes``, its rows); each run appends its own rows.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pyarrow as pa

from rag_assets.lib.evalsets.relocation import HELD, MOVED, changes_of
from rag_assets.lib.evaluate.measures import table_exists
from rag_assets.lib.ingest.folding import fold
from rag_assets.lib.store.paths import read_stored, stored_partition

SCHEMA = pa.schema([("run_id", pa.string()), ("needle_id", pa.string()), ("status", pa.string()),
                    ("doc_id", pa.string()), ("previous_doc_id", pa.string()), ("needle", pa.string()),
                    ("successor", pa.string()), ("similarity", pa.float64()), ("reason", pa.string())])
RUN_NEEDLES = pa.schema([("run_id", pa.string()), ("needle_id", pa.string()), ("needle_hash", pa.string())])
SHOWN = 10  # lost needles named one by one in the verdict; the rest are counted


def stored_changes(home: Path) -> list[dict]:
    """The needles the stored evaluation set says were not kept ([] when it has none, or is not stored)."""
    path = stored_partition(Path(home), "eval_set")
    if not path.exists():
        return []
    return changes_of(read_stored(path, "eval_set", metadata_only=True).schema.to_arrow_schema())


def needle_hash(texts: list[str]) -> str:
    """What identifies a needle's text across runs: its spans' folded texts, hashed."""
    return hashlib.sha256("\x00".join(fold(t) for t in texts).encode("utf-8")).hexdigest()[:16]


def stored_needles(home: Path) -> list[tuple[str, str]]:
    """(needle id, needle hash) of every needle the stored evaluation set asks ([] when none is stored)."""
    path = stored_partition(Path(home), "eval_set")
    if not path.exists():
        return []
    rows = read_stored(path, "eval_set").select(["needle_id", "query_kind", "spans"]).to_pylist()
    seen: dict[str, str] = {}
    for row in rows:
        if row["query_kind"] != "out_of_domain" and row["needle_id"] and row["needle_id"] not in seen:
            seen[row["needle_id"]] = needle_hash([span["text"] for span in row["spans"]])
    return list(seen.items())


def write_run_needles(connection: duckdb.DuckDBPyConnection, run_id: str, needles: list[tuple[str, str]]) -> None:
    """Append the needles a run asked, each with its text's hash."""
    incoming = pa.Table.from_pylist([{"run_id": run_id, "needle_id": n, "needle_hash": h} for n, h in needles],
                                    schema=RUN_NEEDLES)
    connection.register("incoming_run_needles", incoming)
    connection.execute("CREATE TABLE IF NOT EXISTS run_needles AS SELECT * FROM incoming_run_needles LIMIT 0")
    connection.execute("INSERT INTO run_needles SELECT * FROM incoming_run_needles")
    connection.unregister("incoming_run_needles")


def needles_of_run(connection: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, str] | None:
    """{needle id: hash} a run asked; None for a run recorded before runs kept their needles."""
    if not table_exists(connection, "run_needles"):
        return None
    rows = connection.execute("SELECT needle_id, needle_hash FROM run_needles WHERE run_id = ?", [run_id]).fetchall()
    return dict(rows) if rows else None


def changes_of_run(connection: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, str]:
    """{needle id: status} of the needles a run's snapshot did not keep."""
    return {change["needle_id"]: change["status"] for change in needle_changes_of_run(connection, run_id)}


def left_out_between(older: dict[str, str], newer: dict[str, str], newer_changes: dict[str, str]) -> dict[str, list[str]]:
    """The needles two runs cannot be compared on, by why: ``changed`` (the needle's text differs: a person
    accepted a successor), ``edited``/``removed``/``ambiguous`` (the newer snapshot lost it), ``dropped`` (the
    needle file no longer has it), ``new`` (only the newer run asked it)."""
    why: dict[str, list[str]] = {}
    for needle in sorted(set(older) | set(newer)):
        if needle in older and needle in newer:
            reason = None if older[needle] == newer[needle] else "changed"
        elif needle in older:
            reason = newer_changes.get(needle, "dropped")
        else:
            reason = "new"
        if reason:
            why.setdefault(reason, []).append(needle)
    return why


def write_needle_changes(connection: duckdb.DuckDBPyConnection, run_id: str, changes: list[dict]) -> None:
    """Append the run's needle changes (the table is created, empty, for a run with none)."""
    rows = [{**{name: change.get(name) for name in SCHEMA.names}, "run_id": run_id} for change in changes]
    incoming = pa.Table.from_pylist(rows, schema=SCHEMA)
    connection.register("incoming_needle_changes", incoming)
    connection.execute("CREATE TABLE IF NOT EXISTS needle_changes AS SELECT * FROM incoming_needle_changes LIMIT 0")
    connection.execute("INSERT INTO needle_changes SELECT * FROM incoming_needle_changes")
    connection.unregister("incoming_needle_changes")


def needle_changes_of_run(connection: duckdb.DuckDBPyConnection, run_id: str) -> list[dict]:
    """The needle changes of one run, in the set's order ([] for a file from before them)."""
    if not table_exists(connection, "needle_changes"):
        return []
    return connection.execute("SELECT * EXCLUDE (run_id) FROM needle_changes WHERE run_id = ? ORDER BY rowid",
                              [run_id]).to_arrow_table().to_pylist()


def latest_needle_changes(connection: duckdb.DuckDBPyConnection) -> list[dict]:
    """The needle changes of the newest evaluation run ([] for a file from before them)."""
    newest = connection.sql("SELECT run_id FROM evaluation_runs ORDER BY created_at DESC, run_id DESC LIMIT 1"
                            ).fetchall()
    return needle_changes_of_run(connection, newest[0][0]) if newest else []


def change_lines(changes: list[dict], shown: int = SHOWN) -> list[str]:
    """The verdict's lines on the needles: how many were left out and why, each lost one named (the first
    ``shown``), with the successor offered; how many moved. [] when every needle was kept."""
    lost = [c for c in changes if c["status"] not in HELD]
    moved = [c for c in changes if c["status"] == MOVED]
    lines = []
    if lost:
        one = len(lost) == 1
        lines.append(f"{len(lost)} needle{'' if one else 's'} left out of this evaluation: the corpus no longer holds "
                     f"{'it' if one else 'them'} as written (`rag-assets needles repair` offers "
                     f"{'its successor' if one else 'their successors'}):")
        for change in lost[:shown]:
            offered = f"; successor offered: \"{change['successor']}\"" if change["successor"] else ""
            lines.append(f"  {change['needle_id']}: {change['reason']}{offered}")
        if len(lost) > shown:
            lines.append(f"  and {len(lost) - shown} more (metrics.duckdb, needle_changes)")
    if moved:
        lines.append(f"{len(moved)} needle{'s' if len(moved) != 1 else ''} moved to another page and kept: "
                     + ", ".join(f"{c['needle_id']} ({c['previous_doc_id']} -> {c['doc_id']})" for c in moved[:shown])
                     + (f" and {len(moved) - shown} more" if len(moved) > shown else ""))
    return lines
