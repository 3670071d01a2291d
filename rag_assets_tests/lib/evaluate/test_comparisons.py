"""The paired tests of one run: the pick against the others, the field's questions around it, external
retrievers against it; over needles, at the decision's budget, one family adjusted together."""

import duckdb
import pytest
from statsmodels.stats.multitest import multipletests

from rag_assets.lib.evaluate.comparisons import compute_comparisons, write_comparisons
from rag_assets.lib.evaluate.decision import DecisionRule, rank_configurations
from rag_assets.lib.evaluate.measures import comparison, write_results
from rag_assets.lib.evaluate.tables import format_comparisons
from rag_assets.lib.store.stamps import EXTERNAL_MODEL
from rag_assets_tests.lib.evaluate.needle_rows import configuration, table

RULE = DecisionRule(budget=1024, budgets=(1024,))
MISS = None


def _family(connection, rule=RULE):
    return compute_comparisons(connection, rank_configurations(connection, rule), rule).to_pylist()


@pytest.fixture
def connection():
    # ten needles, chunks of 100 tokens: 1024 tokens hold the top 10. boundaries_header x hybrid finds n0-n8
    # (the pick), boundaries_header x dense n0-n6, boundaries x hybrid n0-n4 and n9, the late-interaction
    # reranker of the pick's list n0-n7
    rows = table(
        configuration("m", "boundaries_header", "hybrid", [1] * 9 + [MISS]),
        configuration("m", "boundaries_header", "dense", [2] * 7 + [MISS] * 3),
        configuration("m", "boundaries", "hybrid", [3] * 5 + [MISS] * 4 + [1]),
        configuration("m", "boundaries_header", "late_interaction", [1] * 8 + [MISS] * 2),
        configuration(EXTERNAL_MODEL, "prod", "prod", [1] * 10),
    )
    with duckdb.connect() as connection:
        write_results(connection, rows, budgets=(1024,))
        yield connection


def test_the_pick_is_tested_against_every_other_competing_configuration(connection):
    verdict = [r for r in _family(connection) if r["family"] == "verdict"]
    assert [(r["comparison"], r["b_strategy"], r["b_retriever"]) for r in verdict] == [
        ("pick vs #2", "boundaries_header", "late_interaction"), ("pick vs #3", "boundaries_header", "dense"),
        ("pick vs #4", "boundaries", "hybrid")]
    against_dense = verdict[1]
    # discordant needles: the pick alone finds n7 and n8: +2/-0, exact two-sided p = 2 / 2^2
    assert (against_dense["wins"], against_dense["losses"], against_dense["ties"]) == (2, 0, 8)
    assert against_dense["p_value"] == pytest.approx(0.5) and against_dense["needles"] == 10
    assert (against_dense["a_value"], against_dense["b_value"]) == (0.9, 0.7)


def test_the_fields_questions_are_asked_around_the_pick(connection):
    by_key = {r["comparison"]: r for r in _family(connection) if r["family"] == "question"}
    # the header on the pick's model and retriever: boundaries_header x hybrid against boundaries x hybrid
    header = by_key["header"]
    assert (header["a_strategy"], header["b_strategy"], header["a_retriever"]) == ("boundaries_header", "boundaries",
                                                                                   "hybrid")
    assert (header["wins"], header["losses"]) == (4, 1)  # n5-n8 against n9
    # hybrid against dense and the reranker against its first stage, on the pick's strategy
    assert (by_key["hybrid"]["a_retriever"], by_key["hybrid"]["b_retriever"]) == ("hybrid", "dense")
    late = by_key["late_interaction"]
    assert (late["a_retriever"], late["b_retriever"], late["wins"], late["losses"]) == ("late_interaction", "hybrid",
                                                                                        0, 1)
    # questions whose configurations were not evaluated are not asked
    assert "overlap" not in by_key and "overlap_on_header" not in by_key


def test_an_external_retriever_is_compared_with_the_pick(connection):
    [external] = [r for r in _family(connection) if r["family"] == "external"]
    assert (external["model"], external["a_strategy"], external["b_strategy"], external["b_retriever"]) == (
        EXTERNAL_MODEL, "prod", "boundaries_header", "hybrid")
    assert (external["a_value"], external["b_value"], external["wins"], external["losses"]) == (1.0, 0.9, 1, 0)


@pytest.mark.parametrize("method, theirs", [("holm", "holm"), ("bh", "fdr_bh")])
def test_every_p_of_the_run_is_adjusted_as_one_family(connection, method, theirs):
    rule = DecisionRule(budget=1024, budgets=(1024,), adjustment=method)
    family = _family(connection, rule)
    assert len(family) == 3 + 3 + 1  # the pick against three, three questions, one external retriever
    expected = multipletests([r["p_value"] for r in family], method=theirs)[1]
    assert [r["p_adjusted"] for r in family] == pytest.approx(list(expected), abs=1e-12)
    assert {r["adjustment"] for r in family} == {method}
    assert all(r["p_adjusted"] >= r["p_value"] for r in family)


def test_duplicated_queries_leave_needle_level_intervals_and_p_values_as_they_were():
    # the same outcomes asked in one phrasing and in two identical ones: the needle is the unit, so nothing
    # changes; counted per query, the interval would narrow (Wilson over 20 trials instead of 10)
    from rag_assets.lib.evaluate.intervals import wilson_interval

    def evaluated(phrasings):
        rows = table(configuration("m", "boundaries_header", "hybrid", [1] * 7 + [MISS] * 3, phrasings=phrasings),
                     configuration("m", "boundaries_header", "dense", [1] * 3 + [MISS] * 7, phrasings=phrasings))
        with duckdb.connect() as connection:
            write_results(connection, rows, budgets=(1024,))
            metrics = {r["retriever"]: r for r in comparison(connection).to_pylist()}
            return metrics, _family(connection)

    (once, tests_once), (twice, tests_twice) = evaluated(("doc",)), evaluated(("doc", "ticket"))
    assert twice["hybrid"]["queries"] == 2 * once["hybrid"]["queries"] == 20
    for name in ("success_at_1024_tokens", "mrr", "success_at_4"):
        for end in ("", "_low", "_high"):
            assert twice["hybrid"][name + end] == pytest.approx(once["hybrid"][name + end])
    assert [t["p_value"] for t in tests_twice] == pytest.approx([t["p_value"] for t in tests_once])
    assert once["hybrid"]["success_at_1024_tokens_low"] == pytest.approx(wilson_interval(7, 10)[0])
    assert wilson_interval(14, 20)[0] > once["hybrid"]["success_at_1024_tokens_low"]  # what per-query would say


def test_phrasings_that_disagree_are_one_needle_half_answered():
    rows = table(configuration("m", "blind", "dense", [(1, MISS), (1, 1), (MISS, MISS), (2, MISS)],
                               phrasings=("doc", "ticket")))
    with duckdb.connect() as connection:
        write_results(connection, rows, budgets=(1024,))
        [row] = comparison(connection).to_pylist()
        per_phrasing = {r["phrasing"]: r for r in comparison(connection, ("model", "phrasing")).to_pylist()}
    # needles' means 0.5, 1, 0, 0.5: success 0.5 over 4 needles (8 queries), Wilson's interval of 2 in 4
    assert (row["needles"], row["queries"], row["success_at_4"]) == (4, 8, 0.5)
    from rag_assets.lib.evaluate.intervals import wilson_interval
    assert (row["success_at_4_low"], row["success_at_4_high"]) == pytest.approx(wilson_interval(2, 4))
    # the per-phrasing figures stay: the doc phrasing answered 3 of 4, the ticket one 1 of 4
    assert (per_phrasing["doc"]["success_at_4"], per_phrasing["ticket"]["success_at_4"]) == (0.75, 0.25)


def test_the_stored_table_and_its_markdown(connection):
    stored = write_comparisons(connection, rank_configurations(connection, RULE), RULE)
    assert connection.sql("SELECT count(*) FROM comparisons").fetchall()[0][0] == stored.num_rows == 7
    markdown = format_comparisons(stored)
    assert ("| verdict | pick vs #3 | m: boundaries_header x hybrid | m: boundaries_header x dense | "
            "success_at_1024_tokens | 10 | 0.900 | 0.700 | +2/-0 | 0.5 |") in markdown
