"""A damaged file under the storage folder is named alone: a damaged page of Dagster's run index is the one
file to set aside (the run history's other files are kept), and a truncated embedding-cache shard is
discarded with a warning on the command's output, its texts embedded again."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing

import pytest

from rag_assets_tests.servers import WORDLLAMA, cli, halve, one_paragraph, tiny_home_env

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    home = tmp_path_factory.mktemp("evaluated") / "home"
    assert cli(tiny_home_env(home), "evaluate", *WORDLLAMA).returncode == 0
    return home


def copy_of(evaluated, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(evaluated, home)
    return home


def root_page(database, name: str) -> int:
    """The page (numbered from 1) at the root of the table or index ``name``: every write to it reads that page."""
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as connection:
        [(page,)] = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchall()
    return page


# event_logs: the first write of a run is its "started" event, so Dagster first says on stderr that it could not
# write a log message (with the statement), then fails the run; idx_step_key: an index every event is written to
@pytest.mark.parametrize("name", ["event_logs", "idx_step_key"])
def test_a_damaged_page_of_the_run_index_names_that_file_and_moves_only_it(evaluated, tmp_path, name):
    home = copy_of(evaluated, tmp_path)
    index = home / "dagster" / "history" / "runs" / "index.db"
    start = (root_page(index, name) - 1) * 4096
    data = bytearray(index.read_bytes())
    data[start: start + 4096] = b"garbage!" * 512  # a whole page, not the first: SQLite still opens the file
    index.write_bytes(bytes(data))
    result = cli(tiny_home_env(home), "evaluate", *WORDLLAMA, "--rebuild")
    assert result.returncode == 1
    said = one_paragraph(result, "evaluate")
    assert f"Dagster's database {index} is damaged" in said and f"mv {index} {index}.damaged" in said, said
    assert f"mv {home / 'dagster'} " not in said, said
    index.rename(index.with_name("index.db.damaged"))  # as told
    again = cli(tiny_home_env(home), "evaluate", *WORDLLAMA)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (home / "dagster" / "history" / "runs.db").exists()


def test_a_run_whose_start_cannot_be_written_to_a_damaged_run_index_is_one_paragraph(evaluated, tmp_path):
    """Dagster writes "Exception while writing logger call to event log" and the statement to stderr itself before
    it fails the run; which write meets a damaged page first depends on the run ids. Here SQLite's message is
    raised (by a trigger) exactly at the run's start event, the write Dagster reports that way."""
    home = copy_of(evaluated, tmp_path)
    index = home / "dagster" / "history" / "runs" / "index.db"
    with closing(sqlite3.connect(index)) as connection:
        connection.execute("CREATE TRIGGER damaged BEFORE INSERT ON event_logs WHEN NEW.dagster_event_type = "
                           "'PIPELINE_START' BEGIN SELECT RAISE(ABORT, 'database disk image is malformed'); END")
        connection.commit()
    result = cli(tiny_home_env(home), "evaluate", *WORDLLAMA, "--rebuild")
    assert result.returncode == 1
    said = one_paragraph(result, "evaluate")
    assert said.startswith(f"rag-assets evaluate: A database of Dagster's under {home / 'dagster'} is damaged "
                           "(database disk image is malformed)"), said
    assert "[SQL:" not in said and "Exception while writing" not in said, said


def test_a_truncated_cache_shard_is_discarded_with_a_warning_and_its_texts_embedded_again(evaluated, tmp_path):
    home = copy_of(evaluated, tmp_path)
    [shard] = (home / "embedding_cache" / "wordllama").glob("*/*.parquet")
    halve(shard)
    result = cli(tiny_home_env(home), "evaluate", *WORDLLAMA, "--rebuild")
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    [warning] = [line for line in output.splitlines() if "damaged cache shard" in line]
    assert warning.startswith("rag-assets: warning: discarded a damaged cache shard") and str(shard) in warning, warning
    assert "its entries are computed again" in warning
    assert list(shard.parent.glob("*.parquet")) and not shard.exists()  # a new shard holds the texts embedded again
