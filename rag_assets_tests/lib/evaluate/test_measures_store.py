"""What the metrics' writer stores beside the measures: the run table and its history, the strategies'
costs, the threshold sweep and its suggested cuts, the mixed-build check, and the readers over them."""

import json
import math

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.measures import (
    ann_recall,
    comparison,
    history,
    mixed_latest_stamps,
    paired_comparisons,
    stored_configurations,
    suggested_cuts,
    table_exists,
    write_chunk_stats,
    write_results,
    write_threshold_sweep,
)
from rag_assets_tests.lib.evaluate.test_measures import SCHEMA, _wilson_by_hand

STAMPED = pa.schema([*SCHEMA, ("snapshot_id", pa.string()), ("pipeline_version", pa.string()),
                     ("extractor_version", pa.string()), ("chunk_ids", pa.list_(pa.string())),
                     ("stage_ms", pa.float64())])


def _row(query, rank, strategy="s", retriever="dense", model="m", revision="r", kind="needle", **stamp):
    return {"query_id": query, "query_kind": kind, "hit_rank": rank, "relevant_ranks": [rank] if rank else [],
            "relevant_total": 1, "phrasing": "doc", "retriever": retriever, "model": model, "revision": revision,
            "strategy": strategy, "latency_ms": 2.0, "snapshot_id": stamp.get("snapshot_id", "snap"),
            "pipeline_version": stamp.get("pipeline_version", "1"),
            "extractor_version": stamp.get("extractor_version", "1"),
            "chunk_ids": stamp.get("chunk_ids", ["c1", "c2", "c3"]), "stage_ms": stamp.get("stage_ms", 1.0)}


def _table(rows, schema=STAMPED):
    return pa.Table.from_pylist(rows, schema=schema)


def test_a_run_is_recorded_with_what_it_was_built_from_and_the_history_is_kept():
    connection = duckdb.connect()
    first = write_results(connection, _table([_row("q1", 1), _row("q2", None), _row("q1", 2, strategy="t")]),
                          {"run_id": "run-one", "dagster_run_id": "dagster-1", "eval_version": "2", "eval_hash": "h1"})
    assert first == "run-one"
    second = write_results(connection, _table([_row("q1", 21, kind="document"), _row("q2", 20, kind="document")]))
    assert len(second) == 16 and second != first
    runs = {row["run_id"]: row for row in connection.sql("SELECT * FROM evaluation_runs").to_arrow_table().to_pylist()}
    one = runs["run-one"]
    assert (one["dagster_run_id"], one["eval_version"], one["eval_hash"], one["snapshot_id"], one["pipeline_version"],
            one["configurations"], one["queries"]) == ("dagster-1", "2", "h1", "snap", "1", 2, 2)
    assert json.loads(one["stamps"]) == [{"model": "m", "revision": "r", "strategy": "s"},
                                         {"model": "m", "revision": "r", "strategy": "t"}]
    assert runs[second]["dagster_run_id"] is None and runs[second]["queries"] == 2
    # both runs' rows are kept; the latest results are the newest run's
    assert connection.sql("SELECT run_id, count(*) FROM retrieval_results GROUP BY 1 ORDER BY 1").fetchall() == sorted(
        [("run-one", 3), (second, 2)])
    assert connection.sql("SELECT DISTINCT run_id FROM latest_results").fetchall() == [(second,)]
    # the history: success@20 and recall@20 (rank 21 is outside, rank 20 inside) and MRR, per run
    later = connection.sql("SELECT success_at_20, recall_at_20, mrr, queries FROM metrics_history WHERE run_id = ?",
                           params=[second]).fetchall()
    assert later == [(0.5, 0.5, pytest.approx((1 / 21 + 1 / 20) / 2), 2)]
    # nothing the writer registered is left behind
    with pytest.raises(duckdb.CatalogException):
        connection.sql("SELECT * FROM incoming_results")


def test_rows_without_stamps_are_recorded_and_the_ann_view_needs_the_lists():
    connection = duckdb.connect()
    plain = pa.Table.from_pylist([_row("q1", 1)], schema=SCHEMA)  # no stamp, no chunk lists
    run_id = write_results(connection, plain.select(SCHEMA.names))
    assert connection.sql("SELECT snapshot_id, pipeline_version, queries FROM evaluation_runs WHERE run_id = ?",
                          params=[run_id]).fetchall() == [(None, None, 0)]
    assert not table_exists(connection, "ann_recall") and ann_recall(connection) == []
    assert table_exists(connection, "metrics") and table_exists(connection, "latest_results")


def test_the_ann_recall_view_and_its_reader():
    connection = duckdb.connect()
    rows = [_row("q1", 1, retriever="dense", chunk_ids=["a", "b", "c"], stage_ms=4.0),
            _row("q1", 1, retriever="ann", chunk_ids=["a", "c", "x"], stage_ms=1.0)]
    write_results(connection, _table(rows))
    [recall] = ann_recall(connection)
    assert (recall["model"], recall["strategy"], recall["queries"]) == ("m", "s", 1)
    assert (recall["ann_recall_at_1"], recall["ann_recall_at_10"]) == (1.0, pytest.approx(2 / 3))
    assert (recall["ann_median_ms"], recall["dense_median_ms"]) == (1.0, 4.0)


def test_the_strategies_costs_per_model_and_strategy():
    connection = duckdb.connect()
    tokens = pa.Table.from_pylist([
        {"model": "m", "strategy": "s", "tokens": 100, "header_tokens": 20, "truncated": False},
        {"model": "m", "strategy": "s", "tokens": 300, "header_tokens": 20, "truncated": True}])
    quality = pa.Table.from_pylist([{"strategy": "s", "chunks": 2, "mean_characters": 410.5, "max_characters": 512,
                                     "mean_content_tokens": 95.5, "max_content_tokens": 120, "needles": 3,
                                     "answers_destroyed": 1, "destroyed_needles": ["n3"]}])
    write_chunk_stats(connection, tokens, quality)
    [row] = connection.sql("SELECT * FROM chunk_stats").to_arrow_table().to_pylist()
    assert row == {"model": "m", "strategy": "s", "chunks": 2, "mean_characters": 410.5, "max_characters": 512,
                   "mean_content_tokens": 95.5, "max_content_tokens": 120, "tokens_embedded": 400, "header_tokens": 40, "header_token_share": 0.1,
                   "embedding_tokens_per_second": None, "embedding_seconds": None, "truncated_chunks": 1,
                   "needles": 3, "answers_destroyed": 1, "destroyed_needles": ["n3"]}
    for name in ("incoming_tokens", "incoming_quality", "incoming_rates"):
        with pytest.raises(duckdb.CatalogException):
            connection.sql(f"SELECT * FROM {name}")


def _sweep_row(cut, suggested, **counts):
    row = {"model": "m", "revision": "r", "strategy": "s", "retriever": "dense", "cut": cut, "in_domain": 10,
           "out_of_domain": 4, "near": 3, "off_topic": 1, "answered_with_needle": 7, "answered_without_needle": 1,
           "in_domain_refused": 2, "bluffs": 1, "bluffs_near": 1, "bluffs_off_topic": 0, "out_of_domain_refused": 3,
           "worst_in_domain": 0.6, "best_out_of_domain": 0.4, "separable": False, "auroc": 0.8, "auroc_low": 0.6,
           "auroc_high": 0.95, "suggested": suggested}
    return row | counts


def test_the_suggested_cuts_carry_their_shares_with_wilson_intervals():
    connection = duckdb.connect()
    write_threshold_sweep(connection, pa.Table.from_pylist([
        _sweep_row(0.5, False), _sweep_row(0.55, True),
        _sweep_row(0.6, True, retriever="late_interaction", out_of_domain=0, bluffs=0, bluffs_near=0)]))
    assert connection.sql("SELECT count(*) FROM threshold_sweep").fetchall() == [(3,)]
    dense, late = suggested_cuts(connection).to_pylist()
    assert (dense["retriever"], dense["cut"], late["retriever"]) == ("dense", 0.55, "late_interaction")
    for name, count, total in (("answered", 7, 10), ("bluff", 1, 4), ("refused", 2, 10)):
        low, high = _wilson_by_hand(count, total)
        assert (dense[name], dense[f"{name}_low"], dense[f"{name}_high"]) == pytest.approx(
            (count / total, low, high), abs=1e-12), name
    assert (late["bluff"], late["bluff_low"], late["bluff_high"]) == (None, None, None)  # no out-of-domain query
    assert {key: dense[key] for key in ("worst_in_domain", "best_out_of_domain", "separable", "auroc", "auroc_low",
                                        "auroc_high", "bluffs_near", "bluffs_off_topic", "answered_without_needle")} == {
        "worst_in_domain": 0.6, "best_out_of_domain": 0.4, "separable": False, "auroc": 0.8, "auroc_low": 0.6,
        "auroc_high": 0.95, "bluffs_near": 1, "bluffs_off_topic": 0, "answered_without_needle": 1}
    with pytest.raises(duckdb.CatalogException):
        connection.sql("SELECT * FROM incoming_sweep")


def test_a_latest_run_that_mixes_builds_is_named_per_field():
    connection = duckdb.connect()
    write_results(connection, _table([_row("q1", 1), _row("q1", 1, strategy="t")]))
    assert mixed_latest_stamps(connection) == []
    write_results(connection, _table([
        _row("q1", 1, snapshot_id="s1", pipeline_version="1", extractor_version="1"),
        _row("q1", 1, strategy="t", snapshot_id="s2", pipeline_version="2", extractor_version="3"),
        _row("q1", 1, model="n", revision="r2"), _row("q1", 1, model="n", revision="r3", strategy="t"),
        _row("q1", 1, model="o", revision="r9", strategy="u")]))
    assert mixed_latest_stamps(connection) == [
        "snapshot_id s1, s2, snap", "pipeline_version 1, 2", "extractor_version 1, 3", "revision r2, r3 for model n"]


def test_the_history_of_one_configuration_oldest_first():
    connection = duckdb.connect()
    write_results(connection, _table([_row("q1", 1), _row("q2", 4), _row("q3", None), _row("q1", 1, model="x")]),
                  {"run_id": "a"})
    write_results(connection, _table([_row("q1", 1), _row("q2", 20), _row("q3", 21)]), {"run_id": "b"})
    rows = history(connection, "m", "s", "dense").to_pylist()
    assert [row["run_id"] for row in rows] == ["a", "b"]
    low, high = _wilson_by_hand(2, 3)
    assert (rows[0]["recall_at_20"], rows[0]["recall_at_20_low"], rows[0]["recall_at_20_high"]) == pytest.approx(
        (2 / 3, low, high), abs=1e-12)
    # rank 20 is inside recall@20, rank 21 outside
    assert rows[1]["recall_at_20"] == pytest.approx(2 / 3)
    assert rows[0]["mrr"] == pytest.approx((1 + 1 / 4) / 3) and rows[1]["mrr"] == pytest.approx((1 + 1 / 20 + 1 / 21) / 3)
    assert (rows[0]["queries"], rows[0]["snapshot_id"], rows[0]["revision"]) == (3, "snap", "r")
    assert history(connection, "m", "s", "bm25").num_rows == 0


def test_the_readers_of_the_stored_tables():
    connection = duckdb.connect()
    write_results(connection, _table([_row("q1", 1, retriever="dense"), _row("q1", 2, retriever="bm25"),
                                      _row("q1", 1, strategy="a", retriever="dense")]))
    assert stored_configurations(connection) == [("m", "a", "dense"), ("m", "s", "bm25"), ("m", "s", "dense")]
    assert suggested_cuts(connection) is None and not table_exists(connection, "comparisons")
    connection.execute("CREATE TABLE comparisons AS SELECT 'E vs A' AS comparison, 0.5 AS p_value")
    assert paired_comparisons(connection).to_pylist() == [{"comparison": "E vs A", "p_value": 0.5}]
    with pytest.raises(ValueError, match=r"^cannot group by colour, size; choose from model, revision, strategy, "
                                         r"retriever, phrasing$"):
        comparison(connection, ["model", "colour", "size"])
    with pytest.raises(ValueError, match=r"^cannot group by nothing; choose from model, "):
        comparison(connection, [])
    assert not math.isnan(comparison(connection, ["retriever"]).to_pylist()[0]["mrr"])
