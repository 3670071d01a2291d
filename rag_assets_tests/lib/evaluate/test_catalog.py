"""A measure is one entry of ``catalog.MEASURES``: the views, the comparison table, the paired comparisons and
the regression alarm take it from there."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate import catalog, comparisons, regressions
from rag_assets.lib.evaluate.catalog import Measure, measure
from rag_assets.lib.evaluate.measures import comparison, history, write_results
from rag_assets.lib.evaluate.tables import format_table
from rag_assets_tests.lib.evaluate.test_measures import results_of


# success@2 is no measure of the project: declared here only, it must reach every place a measure is used
def _run(ranks: list) -> pa.Table:
    rows = results_of({("m", "s", "dense"): ranks})
    for column in ("snapshot_id", "pipeline_version"):
        rows = rows.append_column(column, pa.array(["1"] * rows.num_rows))
    return rows


SUCCESS_AT_2 = Measure("success_at_2", "S@2", "hit_at_2", "coalesce(hit_rank <= 2, false)::INTEGER", "proportion",
                       "sign", shown=True, alarm=True, history=True)


def test_every_declared_measure_is_a_column_of_the_views_with_its_interval():
    connection = duckdb.connect()
    write_results(connection, results_of({("m", "s", "dense"): [1, 2, None, 5]}))
    per_query = {c[0] for c in connection.sql("DESCRIBE query_measures").fetchall()}
    [row] = connection.sql("SELECT * FROM metrics").to_arrow_table().to_pylist()
    for declared in catalog.MEASURES:
        assert declared.column in per_query
        assert row[f"{declared.name}_low"] <= row[declared.name] <= row[f"{declared.name}_high"]
    assert row["success_at_1"] == 0.25 and row["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 5) / 4)


def test_a_measure_added_to_the_catalog_reaches_views_tables_comparisons_and_the_alarm(monkeypatch):
    monkeypatch.setattr(catalog, "MEASURES", (*catalog.MEASURES, SUCCESS_AT_2))
    connection = duckdb.connect()
    # the older run finds 4 of 6 queries at rank <= 2, the newer none of them
    write_results(connection, _run([1, 2, 2, 1, None, 9]), {"eval_hash": "h"})
    write_results(connection, _run([3, 3, 4, 3, None, 9]), {"eval_hash": "h"})
    [row] = connection.sql("SELECT * FROM metrics").to_arrow_table().to_pylist()
    assert row["success_at_2"] == 0.0 and row["success_at_2_high"] > 0
    assert "success_at_2" in comparison(connection).column_names
    assert "S@2" in format_table(comparison(connection)).splitlines()[0]
    older, newer = history(connection, "m", "s", "dense").to_pylist()
    assert (older["success_at_2"], newer["success_at_2"]) == (4 / 6, 0.0)
    # the alarm watches it (Holm over its tests: at alpha 1, every drop is named)
    assert {d.measure for d in regressions.latest_regressions(connection, alpha=1.0).drops} >= {"success_at_2"}
    # a paired comparison on the new measure uses its declared test (sign) on its per-needle values
    pair = comparisons.compare(connection, "verdict", "x", ("m", "s", "dense"), ("m", "s", "dense"), "success_at_2")
    assert pair["test"].startswith("sign") and pair["needles"] == 6


def test_an_unknown_measure_is_refused_naming_the_measures():
    with pytest.raises(ValueError, match="unknown measure 'recall@20'.*success_at_1"):
        measure("recall@20")
