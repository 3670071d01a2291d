import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.metrics import comparison, format_table, wilson_interval, write_results


def _results(ranks, strategy="s", out_of_domain=0):
    rows = [{"query_id": f"q{i}", "query_kind": "needle", "hit_rank": rank} for i, rank in enumerate(ranks)]
    rows += [{"query_id": f"o{i}", "query_kind": "out_of_domain", "hit_rank": None} for i in range(out_of_domain)]
    return pa.Table.from_pylist(
        [row | {"phrasing": "doc", "retriever": "dense", "model": "m", "revision": "r", "strategy": strategy}
         for row in rows],
        schema=pa.schema([("query_id", pa.string()), ("query_kind", pa.string()), ("hit_rank", pa.int64()),
                          ("phrasing", pa.string()), ("retriever", pa.string()), ("model", pa.string()),
                          ("revision", pa.string()), ("strategy", pa.string())]))


def test_a_miss_counts_as_zero():
    # hits at rank 1 and 3 and one miss: top-3 holds 2 of 3 queries; MRR = (1 + 1/3 + 0) / 3 = 0.444
    # (AVG over the non-NULL ranks would give (1 + 1/3) / 2 = 0.667)
    # out-of-domain queries have no answer to find: they are not misses and stay out of the measures
    connection = duckdb.connect()
    write_results(connection, _results([1, 3, None], out_of_domain=2))
    r3 = connection.sql("SELECT count_if(hit_rank <= 3) / count(*) FROM retrieval_results "
                        "WHERE query_kind = 'needle'").fetchall()[0][0]
    assert r3 == pytest.approx(2 / 3)
    row = connection.sql("SELECT * FROM metrics").to_arrow_table().to_pylist()[0]
    assert row["recall_at_1"] == pytest.approx(1 / 3)
    assert row["recall_at_4"] == pytest.approx(2 / 3)
    assert row["mrr"] == pytest.approx(4 / 9)
    assert row["queries"] == 3


def test_sql_wilson_matches_python_and_a_published_value():
    # 5 of 10: the Wilson 95 % interval is [0.2366, 0.7634]
    low, high = wilson_interval(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    connection = duckdb.connect()
    write_results(connection, _results([1] * 5 + [None] * 5))
    row = connection.sql("SELECT * FROM metrics").to_arrow_table().to_pylist()[0]
    assert row["recall_at_1_low"] == pytest.approx(low, abs=1e-12)
    assert row["recall_at_1_high"] == pytest.approx(high, abs=1e-12)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)


def test_comparison_groups_and_rejects_unknown_columns():
    connection = duckdb.connect()
    write_results(connection, pa.concat_tables([_results([1, None], "a", 1), _results([2, 2], "b")]))
    table = comparison(connection, ["strategy"])
    assert table.column("strategy").to_pylist() == ["a", "b"]
    assert table.column("recall_at_1").to_pylist() == [0.5, 0.0]
    assert table.column("mrr").to_pylist() == [0.5, 0.5]
    assert "| a | 2 | 0.500 [0.09, 0.91]" in format_table(table)
    with pytest.raises(ValueError, match="cannot group by query_id"):
        comparison(connection, ["query_id"])
