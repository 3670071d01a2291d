"""An error of the Dagster instance's own database as one sentence: the file, the cause and the fix, never
SQLAlchemy's statement and its link. A full disk, a damaged SQLite file (found by asking each of the
instance's files) and a file that cannot be opened each have their own sentence."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

FULL = ("database or disk is full", "disk i/o error", "no space left")
DAMAGED = ("file is not a database", "database disk image is malformed", "malformed database schema")


def _chain(error: BaseException):
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def database_error(error: BaseException) -> BaseException | None:
    """The database driver's error behind ``error`` (SQLAlchemy's ``orig``), or None when there is none."""
    for link in _chain(error):
        if type(link).__module__.split(".")[0] in ("sqlalchemy", "sqlite3", "psycopg2", "psycopg"):
            return getattr(link, "orig", None) or link
    return None


def damaged_files(folder: Path) -> list[Path]:
    """The instance's SQLite files that are not whole databases: those SQLite cannot open, and those whose
    ``quick_check`` finds a problem (a damaged page is reported as rows, not raised)."""
    damaged = []
    for path in sorted(folder.rglob("*.db")):
        connection = None
        try:
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            if connection.execute("PRAGMA quick_check").fetchall() != [("ok",)]:  # what it found, without raising
                damaged.append(path)
        except sqlite3.DatabaseError:
            damaged.append(path)
        finally:
            if connection is not None:
                connection.close()
    return damaged


def instance_storage_sentence(error: BaseException, folder: Path, postgres: bool) -> str | None:
    """One sentence for an error of the instance's database under ``folder`` (the storage folder's
    ``dagster/``), or None when ``error`` is not one."""
    cause = database_error(error)
    if cause is None:
        return None
    said = " ".join(str(cause).split()).split(" [SQL:")[0].split(" (Background on")[0]
    return cause_sentence(said, folder, postgres)


def failed_step_sentence(paragraph: str, folder: Path) -> str | None:
    """The sentence of a damaged instance file for a run that failed in a step because Dagster's SQLite storage
    under ``folder`` is damaged (the step's failure holds SQLite's message), or None when it failed otherwise
    or no file of the instance is damaged."""
    said = " ".join(paragraph.split())
    if "(sqlite3." not in said or not any(words in said.lower() for words in DAMAGED):
        return None
    if not folder.exists() or not damaged_files(folder):
        return None
    cause = said.split("(sqlite3.", 1)[1].split(") ", 1)[-1].split(" [SQL:")[0]
    return cause_sentence(cause, folder, False)


def cause_sentence(said: str, folder: Path, postgres: bool) -> str:
    """The sentence for the database error ``said`` of the instance under ``folder``."""
    if postgres:
        return (f"Dagster's PostgreSQL database (DAGSTER_PG_URL) failed: {said}. Check the server and the "
                "database, or unset DAGSTER_PG_URL for the embedded SQLite instance")
    lowered = said.lower()
    if any(words in lowered for words in FULL):
        free = shutil.disk_usage(folder).free if folder.exists() else 0
        return (f"Dagster's database under {folder} cannot be written ({said}; {free:,} bytes free on its "
                "device): free space, or point RAG_ASSETS_HOME at a folder on a device with room, and run again")
    if any(words in lowered for words in DAMAGED):
        damaged = damaged_files(folder) if folder.exists() else []
        named = f"Dagster's database {', '.join(str(path) for path in damaged)}" if damaged else (
            f"A database of Dagster's under {folder}")  # SQLite said so, yet each file's own check finds it whole
        moves = "; ".join(f"mv {path} {path}.damaged" for path in damaged) or f"mv {folder} {folder}.damaged"
        return (f"{named} is damaged ({said}). Set it aside ({moves}) and run again: Dagster "
                "starts a new run history, and the results (metrics.duckdb, the Parquet files, the embedding "
                "cache) are kept, so `rag-assets evaluate` records them again from what is stored")
    if "unable to open database file" in lowered:
        return (f"Dagster's database under {folder} cannot be opened ({said}): the folder must exist, be "
                "writable and have a path this system can open (RAG_ASSETS_HOME)")
    return f"Dagster's database under {folder} failed: {said}"


LOG_WRITE_FAILED = "Exception while writing logger call to event log:"


class WithoutLogWriteFailures:
    """A text stream (the command's stderr) that passes everything on except Dagster's own report that it
    could not write a log message to its event log because its database is damaged or full ("Exception while
    writing logger call to event log: (sqlite3.DatabaseError) ... [SQL: INSERT ...] [parameters: ...]",
    written straight to ``sys.stderr``): for a run's own event Dagster raises it, so it reaches the command as
    the run's error, said in one sentence with the file and the fix; a step's log message lost to the same
    cause is followed by the next event's failure. Any other failure to write the log is passed on as it is."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        if text.startswith(LOG_WRITE_FAILED) and any(words in text.lower() for words in DAMAGED + FULL):
            return len(text)
        return self._stream.write(text)

    def __getattr__(self, name: str):  # flush, fileno, isatty, encoding, buffer: the stream's own
        return getattr(self._stream, name)
