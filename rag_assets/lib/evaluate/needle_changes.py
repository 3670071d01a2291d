"""The needles a corpus edit moved or lost, kept with each evaluation run (``needle_changes`` in metrics.duckdb)
and said in the verdict and on the page: the evaluation went on without the lost ones, and a reader must know
which and why.

The evaluation set's file carries them (``relocation.with_changes``); each run appends its own rows.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from rag_assets.lib.evalsets.relocation import HELD, MOVED, changes_of
from rag_assets.lib.evaluate.measures import table_exists
from rag_assets.lib.store.paths import read_stored, stored_partition

SCHEMA = pa.schema([("run_id", pa.string()), ("needle_id", pa.string()), ("status", pa.string()),
                    ("doc_id", pa.string()), ("previous_doc_id", pa.string()), ("needle", pa.string()),
                    ("successor", pa.string()), ("similarity", pa.float64()), ("reason", pa.string())])
SHOWN = 10  # lost needles named one by one in the verdict; the rest are counted


def stored_changes(home: Path) -> list[dict]:
    """The needles the stored evaluation set says were not kept ([] when it has none, or is not stored)."""
    path = stored_partition(Path(home), "eval_set")
    if not path.exists():
        return []
    return changes_of(read_stored(path, "eval_set", metadata_only=True).schema.to_arrow_schema())


def write_needle_changes(connection: duckdb.DuckDBPyConnection, run_id: str, changes: list[dict]) -> None:
    """Append the run's needle changes (the table is created, empty, for a run with none)."""
    rows = [{**{name: change.get(name) for name in SCHEMA.names}, "run_id": run_id} for change in changes]
    incoming = pa.Table.from_pylist(rows, schema=SCHEMA)
    connection.register("incoming_needle_changes", incoming)
    connection.execute("CREATE TABLE IF NOT EXISTS needle_changes AS SELECT * FROM incoming_needle_changes LIMIT 0")
    connection.execute("INSERT INTO needle_changes SELECT * FROM incoming_needle_changes")
    connection.unregister("incoming_needle_changes")


def latest_needle_changes(connection: duckdb.DuckDBPyConnection) -> list[dict]:
    """The needle changes of the newest evaluation run, in the set's order ([] for a file from before them)."""
    if not table_exists(connection, "needle_changes"):
        return []
    return connection.sql(
        "SELECT * EXCLUDE (run_id) FROM needle_changes WHERE run_id = (SELECT run_id FROM evaluation_runs "
        "ORDER BY created_at DESC, run_id DESC LIMIT 1) ORDER BY rowid").to_arrow_table().to_pylist()


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
