import math
import statistics

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.intervals import wilson_interval
from rag_assets.lib.evaluate.measures import comparison, write_results
from rag_assets.lib.evaluate.tables import format_table

SCHEMA = pa.schema([("query_id", pa.string()), ("query_kind", pa.string()), ("hit_rank", pa.int64()),
                    ("relevant_ranks", pa.list_(pa.int64())), ("relevant_total", pa.int64()), ("phrasing", pa.string()),
                    ("retriever", pa.string()), ("model", pa.string()), ("revision", pa.string()),
                    ("strategy", pa.string()), ("latency_ms", pa.float64())])


def results_of(ranks_by_configuration: dict) -> pa.Table:
    """Needle rows of several configurations: {(model, strategy, retriever): [hit rank or None per query]}, query
    i of every configuration being the same query ``q<i>``."""
    return pa.Table.from_pylist([
        {"query_id": f"q{i}", "query_kind": "needle", "hit_rank": rank, "relevant_ranks": [rank] if rank else [],
         "relevant_total": 1, "phrasing": "doc", "retriever": retriever, "model": model, "revision": "r",
         "strategy": strategy, "latency_ms": 1.0}
        for (model, strategy, retriever), ranks in ranks_by_configuration.items() for i, rank in enumerate(ranks)],
        schema=SCHEMA)


def _results(ranks, strategy="s", out_of_domain=0, totals=None, latencies=None):
    """One needle query per entry of ``ranks``: a list of the ranks of its relevant chunks (empty: a miss)."""
    rows = [{"query_id": f"q{i}", "query_kind": "needle", "hit_rank": min(r) if r else None, "relevant_ranks": r,
             "relevant_total": (totals or {}).get(i, max(len(r), 1))} for i, r in enumerate(ranks)]
    rows += [{"query_id": f"o{i}", "query_kind": "out_of_domain", "hit_rank": None, "relevant_ranks": [],
              "relevant_total": 0} for i in range(out_of_domain)]
    return pa.Table.from_pylist(
        [row | {"phrasing": "doc", "retriever": "dense", "model": "m", "revision": "r", "strategy": strategy,
                "latency_ms": (latencies or {}).get(row["query_id"], 1.0)} for row in rows], schema=SCHEMA)


def _metrics(connection):
    return connection.sql("SELECT * FROM metrics ORDER BY strategy").to_arrow_table().to_pylist()


def test_a_miss_counts_as_zero():
    # hits at rank 1 and 3 and one miss: top-3 holds 2 of 3 queries; MRR = (1 + 1/3 + 0) / 3 = 0.444
    # (AVG over the non-NULL ranks would give (1 + 1/3) / 2 = 0.667). Out-of-domain queries have no
    # answer to find: they are not misses and stay out of the measures.
    connection = duckdb.connect()
    write_results(connection, _results([[1], [3], []], out_of_domain=2))
    r3 = connection.sql("SELECT avg(coalesce(hit_rank <= 3, false)::INT) FROM query_measures").fetchall()[0][0]
    assert r3 == pytest.approx(2 / 3)
    [row] = _metrics(connection)
    assert row["queries"] == 3
    assert row["success_at_1"] == pytest.approx(1 / 3) and row["success_at_4"] == pytest.approx(2 / 3)
    # one needle per query: recall@k (share of the needles found) is success@k, interval included
    assert [row[f"recall_at_{k}{end}"] for k in (1, 4) for end in ("", "_low", "_high")] == \
        [row[f"success_at_{k}{end}"] for k in (1, 4) for end in ("", "_low", "_high")]
    assert row["mrr"] == pytest.approx(4 / 9)


def test_recall_is_the_share_of_relevant_documents_found():
    # two document queries with 2 and 4 relevant documents: q0 finds both in its top 4, q1 one of
    # its 4. success@4 = 1.0 (each found something); recall@4 = (2/2 + 1/4) / 2 = 0.625, with the
    # interval of a mean (not Wilson's: the per-query values are not 0 or 1)
    rows = _results([[1, 3], [2]], totals={0: 2, 1: 4}).to_pylist()
    connection = duckdb.connect()
    write_results(connection, pa.Table.from_pylist([r | {"query_kind": "document"} for r in rows], schema=SCHEMA))
    [row] = _metrics(connection)
    assert row["success_at_4"] == 1.0 and row["recall_at_4"] == pytest.approx(0.625)
    # mean +- 1.96 * 0.53033 / sqrt(2) = 0.625 +- 0.735, clipped to [0, 1] (Wilson would give [0.14, 0.94])
    assert (row["recall_at_4_low"], row["recall_at_4_high"]) == (0.0, 1.0)
    history = connection.sql("SELECT success_at_20, recall_at_20 FROM metrics_history").fetchall()
    assert history == [(1.0, pytest.approx(0.625))]


def test_precision_and_ndcg_by_hand():
    # q0: relevant chunks at ranks 1 and 3 of 2 in the index; q1: at rank 2, but 3 in the index.
    # P@4: q0 2/4, q1 1/4 -> 0.375.  nDCG@10: q0 (1 + 1/log2 4) / (1 + 1/log2 3) = 1.5 / 1.6309 = 0.91972;
    # q1 (1/log2 3) / (1 + 1/log2 3 + 1/log2 4) = 0.63093 / 2.13093 = 0.29608 -> mean 0.60790
    connection = duckdb.connect()
    write_results(connection, _results([[1, 3], [2]], totals={0: 2, 1: 3}))
    [row] = _metrics(connection)
    assert row["precision_at_4"] == pytest.approx(0.375)
    assert row["precision_at_1"] == pytest.approx(0.5)
    assert row["ndcg_at_10"] == pytest.approx((0.919720 + 0.296082) / 2, abs=1e-5)
    # a needle no chunk holds (relevant_total 0) scores nDCG 0, not a division by zero
    write_results(connection, _results([[]], totals={0: 0}))
    assert _metrics(connection)[0]["ndcg_at_10"] == 0.0


def test_sql_wilson_matches_python_and_a_published_value():
    # 5 of 10: the Wilson 95 % interval is [0.2366, 0.7634]
    low, high = wilson_interval(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    connection = duckdb.connect()
    write_results(connection, _results([[1]] * 5 + [[]] * 5))
    [row] = _metrics(connection)
    assert row["success_at_1_low"] == pytest.approx(low, abs=1e-12)
    assert row["success_at_1_high"] == pytest.approx(high, abs=1e-12)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    # MRR's interval: mean +- 1.96 sd / sqrt(n); here 0.5 +- 1.96 * 0.52705 / 3.16228 = [0.1733, 0.8267]
    assert (row["mrr_low"], row["mrr_high"]) == pytest.approx((0.17333, 0.82667), abs=1e-4)


def test_history_is_kept_and_the_newest_run_is_measured():
    connection = duckdb.connect()
    first = write_results(connection, _results([[1], [2]]), {"eval_version": "1"})
    second = write_results(connection, _results([[], [2]]), {"eval_version": "2"})
    assert first != second
    assert connection.sql("SELECT count(*) FROM retrieval_results").fetchall() == [(4,)]
    assert connection.sql("SELECT eval_version FROM evaluation_runs ORDER BY created_at").fetchall() == [("1",), ("2",)]
    assert _metrics(connection)[0]["success_at_1"] == 0.0
    # MRR between versions is one query
    history = connection.sql("SELECT e.eval_version, h.mrr FROM metrics_history h JOIN evaluation_runs e USING (run_id) "
                             "ORDER BY e.created_at").fetchall()
    assert history == [("1", pytest.approx(0.75)), ("2", pytest.approx(0.25))]


def test_comparison_groups_and_rejects_unknown_columns():
    connection = duckdb.connect()
    write_results(connection, pa.concat_tables([_results([[1], []], "a", 1), _results([[2], [2]], "b")]))
    table = comparison(connection, ["strategy"])
    assert table.column("strategy").to_pylist() == ["a", "b"]
    assert table.column("success_at_1").to_pylist() == [0.5, 0.0]
    assert table.column("mrr").to_pylist() == [0.5, 0.5]
    assert "| a | 2 | 2 | 0.500 [0.09, 0.91]" in format_table(table)  # two needles of one query each
    with pytest.raises(ValueError, match="cannot group by query_id"):
        comparison(connection, ["query_id"])


def _wilson_by_hand(successes: int, n: int) -> tuple[float, float]:
    """Wilson's score interval written out again here (not the project's function)."""
    z = 1.959963984540054
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


PINNED = [[1, 2], [3], [], [2, 4], [9]]  # relevant ranks of five needle queries (two have two holding chunks)


def test_precision_at_k_has_the_wilson_interval_of_its_k_x_queries_slots():
    # relevant chunks in the top 4: 2, 1, 0, 2, 0 = 5 of the 20 slots: 0.25 with Wilson's [0.1119, 0.4687]
    connection = duckdb.connect()
    write_results(connection, _results(PINNED, totals={0: 2, 3: 2}))
    [row] = _metrics(connection)
    low, high = _wilson_by_hand(5, 20)
    assert (round(low, 4), round(high, 4)) == (0.1119, 0.4687)
    assert row["precision_at_4"] == 0.25
    assert (row["precision_at_4_low"], row["precision_at_4_high"]) == pytest.approx((low, high), abs=1e-12)


def test_ndcg_and_mrr_have_the_normal_interval_of_a_mean_unclipped():
    connection = duckdb.connect()
    write_results(connection, _results(PINNED, totals={0: 2, 3: 2}))
    [row] = _metrics(connection)
    gains = [1.0, 1 / math.log2(4), 0.0, (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)),
             1 / math.log2(10)]
    for name, values in (("ndcg_at_10", gains), ("mrr", [1.0, 1 / 3, 0.0, 0.5, 1 / 9])):
        mean = statistics.fmean(values)
        half = 1.959963984540054 * statistics.stdev(values) / math.sqrt(len(values))
        assert 0 < mean - half and mean + half < 1, name  # the bounds themselves, not a clip, are checked
        assert (row[name], row[f"{name}_low"], row[f"{name}_high"]) == pytest.approx(
            (mean, mean - half, mean + half), abs=1e-12), name


def test_the_median_latency_of_a_configuration_is_over_its_in_domain_queries():
    connection = duckdb.connect()
    write_results(connection, _results([[1], [2], [], [1]], out_of_domain=1,
                                       latencies={"q0": 1.0, "q1": 5.0, "q2": 2.0, "q3": 9.0, "o0": 100.0}))
    [row] = _metrics(connection)
    assert row["median_latency_ms"] == pytest.approx(statistics.median([1.0, 5.0, 2.0, 9.0]))
