"""The needles a corpus edit moved or lost: carried by the evaluation set's file, kept per run in DuckDB, and
said in the verdict's words."""

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from rag_assets.lib.evalsets.queries import Needle
from rag_assets.lib.evalsets.relocation import changes_of, relocate, with_changes
from rag_assets.lib.evaluate.needle_changes import (
    change_lines,
    latest_needle_changes,
    left_out_between,
    needle_hash,
    needles_of_run,
    stored_changes,
    stored_needles,
    write_needle_changes,
    write_run_needles,
)
from rag_assets.lib.store.paths import partition_path

RINSE = "Let the mixture stand for one hour before rinsing it off with cold water."
OTHER = "The cache keeps every vector it computed on the local disk of the machine."
GONE = "This sentence was deleted from the page by a writer last week entirely."
DOCS = {"care.md": f"Sweep it daily. {RINSE.replace('one hour', 'an hour')} Dry it.\n",
        "cache.md": f"{OTHER} It is safe to delete it.\n"}
NEEDLES = [Needle("k1", "care.md", RINSE, {}), Needle("k2", "care.md", OTHER, {}), Needle("k3", "care.md", GONE, {}),
           Needle("k4", "cache.md", OTHER.replace("cache keeps", "cache  keeps"), {})]


def changes():
    return [r.row() for r in relocate(NEEDLES, DOCS) if r.status != "kept"]


def test_the_set_file_carries_its_changes_through_parquet(tmp_path):
    relocations = relocate(NEEDLES, DOCS)
    table = with_changes(pa.table({"query_id": ["k4:doc"]}, metadata={b"other": b"kept"}), relocations)
    path = partition_path(tmp_path, "eval_set")
    path.parent.mkdir(parents=True)
    pq.write_table(table, path)
    stored = stored_changes(tmp_path)
    assert [(c["needle_id"], c["status"]) for c in stored] == [("k1", "edited"), ("k2", "moved"), ("k3", "removed")]
    assert pq.read_schema(path).metadata[b"other"] == b"kept"
    assert changes_of(pa.schema([])) == [] and stored_changes(tmp_path / "nothing") == []


def test_each_run_keeps_its_own_changes_and_the_newest_is_read(tmp_path):
    with duckdb.connect() as connection:
        connection.execute("CREATE TABLE evaluation_runs (run_id VARCHAR, created_at TIMESTAMP)")
        assert latest_needle_changes(connection) == []  # a file from before the table
        connection.execute("INSERT INTO evaluation_runs VALUES ('r1', '2026-12-01'), ('r2', '2026-12-02')")
        write_needle_changes(connection, "r1", changes())
        write_needle_changes(connection, "r2", [])
        assert latest_needle_changes(connection) == []  # the newest run kept every needle
        connection.execute("INSERT INTO evaluation_runs VALUES ('r3', '2026-12-03')")
        write_needle_changes(connection, "r3", changes()[:2])
        latest = latest_needle_changes(connection)
        assert [(c["needle_id"], c["status"], c["doc_id"]) for c in latest] == [
            ("k1", "edited", "care.md"), ("k2", "moved", "cache.md")]
        assert connection.sql("SELECT count(*) FROM needle_changes WHERE run_id = 'r1'").fetchall() == [(3,)]


def test_the_verdict_names_each_lost_needle_its_successor_and_the_moved_ones():
    lines = change_lines(changes())
    assert lines[0].startswith("2 needles left out of this evaluation: the corpus no longer holds them")
    assert change_lines(changes()[:1])[0].endswith("holds it as written (`rag-assets needles repair` offers its successor):")
    assert lines[1] == (f"  k1: edited (0.98 alike); successor offered: \"{RINSE.replace('one hour', 'an hour')}\"")
    assert lines[2].startswith("  k3: removed: no sentence of the snapshot is like it")
    assert lines[3] == "1 needle moved to another page and kept: k2 (care.md -> cache.md)"
    assert change_lines([]) == []


def test_only_the_first_lost_needles_are_named_and_the_rest_counted():
    lost = [{"needle_id": f"n{i}", "status": "removed", "reason": "removed: gone", "successor": None,
             "doc_id": "a", "previous_doc_id": "a"} for i in range(12)]
    lines = change_lines(lost, shown=10)
    assert lines[0].startswith("12 needles left out") and len(lines) == 12 and lines[-1].startswith("  and 2 more")


def test_needles_left_out_between_two_runs_are_grouped_by_why():
    older = {"a": "h1", "b": "h2", "c": "h3", "d": "h4"}
    newer = {"a": "h1", "b": "other", "e": "h5"}
    assert left_out_between(older, newer, {"c": "removed"}) == {
        "changed": ["b"], "removed": ["c"], "dropped": ["d"], "new": ["e"]}
    assert left_out_between(older, dict(older), {}) == {}


def test_a_needle_hash_is_of_the_folded_text():
    assert needle_hash(["Let it  stand."]) == needle_hash(["Let it stand."]) != needle_hash(["Let it sit."])


def test_the_needles_a_run_asked_are_read_from_the_stored_set_and_kept_per_run(tmp_path):
    spans = [{"doc_id": "a.md", "text": RINSE}]
    table = pa.table({"needle_id": ["k1", "k1", None], "query_kind": ["needle", "needle", "out_of_domain"],
                      "spans": [spans, spans, []]})
    path = partition_path(tmp_path, "eval_set")
    path.parent.mkdir(parents=True)
    pq.write_table(table, path)
    assert stored_needles(tmp_path) == [("k1", needle_hash([RINSE]))]
    with duckdb.connect() as connection:
        assert needles_of_run(connection, "r1") is None  # a file from before runs kept their needles
        write_run_needles(connection, "r1", stored_needles(tmp_path))
        assert needles_of_run(connection, "r1") == {"k1": needle_hash([RINSE])}
        assert needles_of_run(connection, "r2") is None
