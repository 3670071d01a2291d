"""An error of Dagster's own database as one sentence naming the damaged file and moving only it (pure logic:
real SQLite files, errors built as SQLAlchemy raises them)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from rag_assets.instance.storage_errors import WithoutLogWriteFailures, damaged_files, instance_storage_sentence

PAGE = 4096


def database(path: Path, rows: int = 400) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA page_size = 4096")
        connection.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, body TEXT)")
        connection.executemany("INSERT INTO runs (body) VALUES (?)", [(f"run {n} " * 20,) for n in range(rows)])
    connection.close()
    return path


def damage_page(path: Path, page: int) -> None:
    data = bytearray(path.read_bytes())
    data[page * PAGE + 100: page * PAGE + 400] = b"garbage!" * 37 + b"gggg"
    path.write_bytes(bytes(data))


def sqlalchemy_error(message: str) -> sa.exc.DatabaseError:
    return sa.exc.DatabaseError("SELECT 1", {}, sqlite3.DatabaseError(message))


def test_a_damaged_page_that_quick_check_reports_as_rows_is_found(tmp_path):
    whole, paged = database(tmp_path / "history" / "runs.db"), database(tmp_path / "history" / "runs" / "index.db")
    damage_page(paged, 3)
    connection = sqlite3.connect(f"file:{paged}?mode=ro", uri=True)
    assert connection.execute("PRAGMA quick_check").fetchall() != [("ok",)]  # rows, not an exception
    connection.close()
    assert damaged_files(tmp_path) == [paged] and whole not in damaged_files(tmp_path)


def test_garbage_and_an_unreadable_header_are_found_too(tmp_path):
    (tmp_path / "schedules").mkdir()
    (tmp_path / "schedules" / "schedules.db").write_bytes(b"garbage" * 1000)
    database(tmp_path / "history" / "runs.db")
    assert damaged_files(tmp_path) == [tmp_path / "schedules" / "schedules.db"]


def test_the_sentence_names_only_the_damaged_file_to_move(tmp_path):
    database(tmp_path / "history" / "runs.db")
    index = database(tmp_path / "history" / "runs" / "index.db")
    damage_page(index, 3)
    said = instance_storage_sentence(sqlalchemy_error("database disk image is malformed"), tmp_path, False)
    assert f"Dagster's database {index} is damaged (database disk image is malformed)" in said
    assert f"mv {index} {index}.damaged" in said and f"mv {tmp_path} " not in said


def test_with_no_damaged_file_found_the_folder_is_named(tmp_path):
    database(tmp_path / "history" / "runs.db")
    said = instance_storage_sentence(sqlalchemy_error("file is not a database"), tmp_path, False)
    assert f"mv {tmp_path} {tmp_path}.damaged" in said
    assert said.startswith(f"A database of Dagster's under {tmp_path} is damaged (file is not a database)"), said


@pytest.mark.parametrize(("message", "expected"), [
    ("database or disk is full", "cannot be written"),
    ("unable to open database file", "cannot be opened"),
    ("no such table: runs", "failed: no such table: runs"),
])
def test_other_causes_have_their_own_sentence(tmp_path, message, expected):
    assert expected in instance_storage_sentence(sqlalchemy_error(message), tmp_path, False)
    assert instance_storage_sentence(ValueError("not a database error"), tmp_path, False) is None


def test_a_step_that_failed_on_a_damaged_instance_file_is_told_as_that_file(tmp_path):
    from rag_assets.instance.storage_errors import failed_step_sentence

    index = database(tmp_path / "history" / "runs" / "index.db")
    failure = ("observe_inputs (corpus_folder, embedding_model) failed (run 7a1d828e). embedding_model failed: "
               "(sqlite3.DatabaseError) database disk image is malformed [SQL: SELECT event_logs.id FROM event_logs]")
    assert failed_step_sentence(failure, tmp_path) is None  # nothing under the instance is damaged: as it is
    damage_page(index, 3)
    said = failed_step_sentence(failure, tmp_path)
    assert said.startswith(f"Dagster's database {index} is damaged (database disk image is malformed)"), said
    assert "[SQL:" not in said and f"mv {index} {index}.damaged" in said
    assert failed_step_sentence("chunks failed: a document is damaged", tmp_path) is None


LOG_WRITE = ("Exception while writing logger call to event log: (sqlite3.DatabaseError) {}\n"
             "[SQL: INSERT INTO event_logs (run_id, event) VALUES (?, ?)]\n[parameters: ('85d8', '{{}}')]\n"
             "(Background on this error at: https://sqlalche.me/e/21/4xp6)\n")


@pytest.mark.parametrize("cause", ["database disk image is malformed", "file is not a database",
                                   "database or disk is full"])
def test_dagsters_report_of_a_log_it_could_not_write_to_a_damaged_or_full_database_is_not_passed_on(cause):
    import io

    stream = io.StringIO()
    quiet = WithoutLogWriteFailures(stream)
    assert quiet.write(LOG_WRITE.format(cause)) == len(LOG_WRITE.format(cause))
    quiet.write("rag-assets evaluate: Dagster's database x is damaged.\n")
    assert stream.getvalue() == "rag-assets evaluate: Dagster's database x is damaged.\n"


def test_any_other_write_and_any_other_log_write_failure_pass_on_and_the_stream_is_the_streams_own():
    import io

    stream = io.StringIO()
    quiet = WithoutLogWriteFailures(stream)
    other = LOG_WRITE.format("database is locked")
    quiet.write(other)
    quiet.write("database disk image is malformed, said a step\n")  # not Dagster's log-write report
    assert stream.getvalue() == other + "database disk image is malformed, said a step\n"
    assert quiet.getvalue() is not None and quiet.seekable() == stream.seekable()
