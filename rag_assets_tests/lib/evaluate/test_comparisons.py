"""The default paired comparisons: which pairs are compared, on which measure, with hand-computed tests."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.comparisons import compute_comparisons, write_comparisons
from rag_assets.lib.evaluate.measures import write_results
from rag_assets.lib.evaluate.tables import format_comparisons
from rag_assets_tests.lib.evaluate.test_measures import SCHEMA


def _rows(strategy: str, retriever: str, hit_ranks: list[int | None]) -> list[dict]:
    return [{"query_id": f"q{i}", "query_kind": "needle", "hit_rank": rank, "relevant_ranks": [rank] if rank else [],
             "relevant_total": 1, "phrasing": "doc", "retriever": retriever, "model": "m", "revision": "r",
             "strategy": strategy, "latency_ms": 1.0} for i, rank in enumerate(hit_ranks)]


@pytest.fixture
def connection():
    # ten queries. At k = 8, boundaries_header (E) finds q0-q6, blind (A) finds q5-q7: E wins q0-q4 (5), A wins q7 (1)
    header = [1, 2, 3, 5, 8, 1, 2, None, None, None]
    blind = [None, None, None, None, 9, 3, 4, 6, None, None]
    rows = _rows("boundaries_header", "dense", header) + _rows("blind", "dense", blind)
    # hybrid against dense on boundaries_header at k = 4: hybrid finds q7 and q8 too, loses q6 (rank 5)
    rows += _rows("boundaries_header", "hybrid", [1, 2, 3, 6, 8, 1, 5, 4, 3, None])
    # late interaction against hybrid: reciprocal ranks up on q1-q4, down on q0, the same elsewhere
    rows += _rows("boundaries_header", "late_interaction", [2, 1, 1, 1, 1, 1, 5, 4, 3, None])
    with duckdb.connect() as connection:
        write_results(connection, pa.Table.from_pylist(rows, schema=SCHEMA))
        yield connection


def _found(table: pa.Table, comparison: str, measure: str) -> dict:
    [row] = [r for r in table.to_pylist() if r["comparison"] == comparison and r["measure"] == measure]
    return row


def test_strategy_pairs_are_sign_tests_on_the_discordant_queries(connection):
    table = compute_comparisons(connection)
    e_vs_a = _found(table, "E vs A", "success_at_8")
    assert (e_vs_a["wins"], e_vs_a["losses"], e_vs_a["ties"], e_vs_a["queries"]) == (5, 1, 4, 10)
    # exact two-sided sign test: 2 * P(X <= 1 | n = 6) = 2 * (1 + 6) / 64
    assert e_vs_a["p_value"] == pytest.approx(14 / 64)
    assert (e_vs_a["a_value"], e_vs_a["b_value"]) == (0.7, 0.3)
    # pairs whose strategies were not evaluated are not compared
    assert not [r for r in table.to_pylist() if r["comparison"] in ("E vs C", "B vs A", "F vs E")]


def test_retriever_pairs_and_rerankers(connection):
    table = compute_comparisons(connection)
    hybrid = _found(table, "hybrid vs dense", "success_at_4")
    assert (hybrid["wins"], hybrid["losses"]) == (2, 1)  # q7, q8 against q6
    assert hybrid["p_value"] == pytest.approx(1.0)  # 2 * P(X <= 1 | n = 3) = 2 * 4 / 8
    late = _found(table, "late_interaction vs hybrid", "mrr")
    assert (late["wins"], late["losses"], late["test"]) == (4, 1, "Wilcoxon signed-rank (two-sided)")
    assert not [r for r in table.to_pylist() if r["comparison"] == "hybrid vs bm25"]  # no bm25 rows


def test_the_stored_table_and_its_markdown_name_the_strategies(connection):
    stored = write_comparisons(connection)
    assert connection.sql("SELECT count(*) FROM comparisons").fetchall()[0][0] == stored.num_rows > 0
    markdown = format_comparisons(stored)
    assert "| m | E vs A | boundaries_header vs blind | success_at_8 | 10 | 0.700 | 0.300 | +5/-1, p = 0.22 |" \
        in markdown


def test_an_external_retriever_is_paired_against_the_best_built_in_configuration():
    from rag_assets.lib.evaluate.comparisons import best_built_in
    from rag_assets.lib.store.stamps import EXTERNAL_MODEL

    # over the same ten queries: the built-in boundaries_header x dense has MRR 0.55, blind x dense 0.1, and the
    # team's retriever "prod" finds every query at rank 2 (MRR 0.5)
    rows = _rows("boundaries_header", "dense", [1] * 5 + [10] * 5) + _rows("blind", "dense", [None] * 9 + [1])
    rows += [row | {"model": EXTERNAL_MODEL} for row in _rows("prod", "prod", [2] * 10)]
    with duckdb.connect() as connection:
        write_results(connection, pa.Table.from_pylist(rows, schema=SCHEMA))
        assert best_built_in(connection) == ("m", "boundaries_header", "dense")
        external = [r for r in compute_comparisons(connection).to_pylist() if r["model"] == EXTERNAL_MODEL]
    assert {r["comparison"] for r in external} == {"prod vs best built-in (m x boundaries_header x dense)"}
    mrr = _found(pa.Table.from_pylist(external), "prod vs best built-in (m x boundaries_header x dense)", "mrr")
    assert (mrr["a_strategy"], mrr["b_strategy"], mrr["b_retriever"], mrr["queries"]) == (
        "prod", "boundaries_header", "dense", 10)
    assert (mrr["a_value"], mrr["b_value"]) == pytest.approx((0.5, 0.55))  # the best's own MRR, not the worst's 0.1
    success = _found(pa.Table.from_pylist(external), "prod vs best built-in (m x boundaries_header x dense)",
                     "success_at_4")
    assert (success["a_value"], success["b_value"], success["wins"], success["losses"]) == (1.0, 0.5, 5, 0)
