"""``metrics.duckdb`` damaged or whole: readers that name it, and a writer that sets a damaged one aside.

Parquet is the source of truth: every current figure in ``metrics.duckdb`` is computed again from the
retrieval partitions by the next ``rag-assets evaluate``. What Parquet does not hold is the history of
earlier evaluation runs. So each time the writer publishes a new file it keeps the one it replaces as
``metrics.duckdb.previous`` (a hard link: no copy, and no later write touches it), and a damaged file
(truncated, overwritten, not a DuckDB file) is renamed ``metrics.duckdb.damaged-<time>``, never
deleted; the run then starts from ``.previous`` when that one is whole, so at most the run the damaged
file added is missing from the history, and the current figures are rebuilt.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import duckdb

PREVIOUS_SUFFIX = ".previous"
DAMAGED_SUFFIX = ".damaged-"


class DamagedDatabase(RuntimeError):
    """A DuckDB file that cannot be read: names it, what DuckDB said and what rebuilds it."""

    paragraph = True  # the message is all a person needs (the command line prints it as it is)

    def __init__(self, database: Path, reason: str) -> None:
        self.database, self.reason = Path(database), reason
        super().__init__(
            f"{database} is damaged and cannot be read ({reason}). `rag-assets evaluate` sets it aside (renamed, "
            "kept) and rebuilds it from the Parquet partitions, with the history of earlier runs from "
            f"{previous_of(database).name} when that copy is whole")


def previous_of(database: Path) -> Path:
    """The file the last writer replaced, kept beside it."""
    return Path(database).with_name(Path(database).name + PREVIOUS_SUFFIX)


def is_lock(error: BaseException) -> bool:
    """Another process holds the file ("Could not set lock on file"): not damage. The word, not the letters: a
    damaged file's "checksum ... in block at location 0" is no lock."""
    return re.search(r"\block\b", str(error), re.IGNORECASE) is not None


def damage_of(database: Path) -> str | None:
    """Why ``database`` cannot be read whole (DuckDB's own words), or None. Opens it read-only and
    reads every row of every table, so damage anywhere in the file is found, not only in its header."""
    try:
        with duckdb.connect(str(database), read_only=True) as connection:
            tables = [name for (name,) in connection.sql(
                "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'").fetchall()]
            for table in tables:
                connection.sql(f'SELECT * FROM "{table}"').to_arrow_reader(1 << 16).read_all()
    except duckdb.Error as error:
        if is_lock(error):
            return None
        return str(error).splitlines()[0]
    return None


@contextmanager
def read_only(database: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to ``database``; DamagedDatabase, naming the file and its rebuild, when
    DuckDB cannot read it (a lock held by a writer is not damage and is raised as DuckDB said it)."""
    try:
        connection = duckdb.connect(str(database), read_only=True)
    except duckdb.Error as error:
        if is_lock(error):
            raise
        raise DamagedDatabase(database, str(error).splitlines()[0]) from error
    try:
        with connection:
            yield connection
    except (duckdb.IOException, duckdb.SerializationException, duckdb.InternalException) as error:
        if is_lock(error):
            raise
        raise DamagedDatabase(database, str(error).splitlines()[0]) from error


def rename_damaged(database: Path) -> Path:
    """Rename a damaged ``database`` (and its write-ahead log) to ``<name>.damaged-<time>-<pid>``, kept, never
    deleted; returns the new name."""
    database = Path(database)
    aside = database.with_name(f"{database.name}{DAMAGED_SUFFIX}{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    os.replace(database, aside)
    wal = database.with_name(database.name + ".wal")
    if wal.exists():
        os.replace(wal, aside.with_name(aside.name + ".wal"))
    return aside


def set_aside(database: Path) -> list[str]:
    """When ``database`` is damaged: rename it (and its write-ahead log) to ``.damaged-<time>`` and put
    the whole ``.previous`` copy in its place, if there is one. Returns what was done, one warning each;
    [] when the file is whole or absent."""
    database = Path(database)
    if not database.exists():
        return []
    reason = damage_of(database)
    if reason is None:
        return []
    aside = rename_damaged(database)
    said = [f"{database} was damaged ({reason}); it is kept as {aside.name} and the metrics are rebuilt from the "
            "Parquet partitions"]
    previous = previous_of(database)
    if previous.exists() and damage_of(previous) is None:
        shutil.copyfile(previous, database)
        said.append(f"the history of earlier evaluation runs comes from {previous.name} (the file before the last "
                    f"run): the runs recorded after it are only in {aside.name}")
    else:
        said.append(f"no whole earlier copy ({previous.name}) to take the history of earlier evaluation runs from: "
                    f"it starts again with this run (the old runs are only in {aside.name})")
    return said


def keep_previous(database: Path) -> None:
    """Keep the file about to be replaced as ``.previous``: a hard link (its bytes stay as they are, since
    the writer renames a new file over the name), or a copy where links are not supported."""
    database = Path(database)
    if not database.exists():
        return
    previous = previous_of(database)
    staging = previous.with_name(f"{previous.name}.{os.getpid()}.tmp")
    staging.unlink(missing_ok=True)
    try:
        os.link(database, staging)
    except OSError:
        shutil.copyfile(database, staging)
    os.replace(staging, previous)
