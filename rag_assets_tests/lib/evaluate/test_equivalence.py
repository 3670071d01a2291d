"""Cost and non-inferiority (``equivalence.py``): the cost order, which term breaks a tie, and the one-sided
paired test against a margin, recomputed by scipy's own one-sample t-test."""

import pytest
from scipy import stats

from rag_assets.lib.evaluate.equivalence import approximate, cost_key, cost_ratio, non_inferiority, tie_break


def row(retriever="dense", latency=10.0, context=900.0, embedded=1000):
    return {"model": "m", "strategy": "s", "retriever": retriever, "median_latency_ms": latency,
            "context_tokens": context, "tokens_embedded": embedded}


def test_approximate_search_is_inherited_by_every_later_stage():
    assert approximate("ann") and not approximate("dense") and not approximate("hybrid")
    assert not approximate("late_interaction") and not approximate("a-teams-own")  # hybrid fuses dense, exact


def test_cost_orders_latency_then_context_then_exact_then_index_cost():
    assert cost_key(row(latency=5)) < cost_key(row(latency=6, context=1))
    assert cost_key(row(context=800)) < cost_key(row(context=900, retriever="dense", embedded=1))
    assert cost_key(row("dense")) < cost_key(row("ann"))
    assert cost_key(row(embedded=10)) < cost_key(row(embedded=11))
    assert cost_key(row(latency=None)) > cost_key(row(latency=1e9))  # unknown costs most


@pytest.mark.parametrize("a, b, said", [
    (row(latency=0.18), row(latency=0.26), "lower latency (0.18 vs 0.26 ms median per query)"),
    (row(context=800), row(context=900), "a smaller context (800 vs 900 tokens a question)"),
    (row("dense"), row("ann"), "exact search (dense is exact, ann approximate)"),
    (row(embedded=1000), row(embedded=2000), "a cheaper index (1,000 vs 2,000 tokens embedded)"),
    (row(), row(), "its name (every cost is the same)"),
])
def test_the_first_cost_that_differs_is_named(a, b, said):
    assert tie_break(a, b) == said


def test_non_inferiority_is_scipys_one_sided_t_on_the_shifted_differences():
    pick = [1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0.5, 1] * 4
    candidate = [1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0.5, 1] * 4
    expected = stats.ttest_1samp([c - p + 0.05 for c, p in zip(candidate, pick)], 0, alternative="greater").pvalue
    assert non_inferiority(candidate, pick, 0.05) == pytest.approx(expected, rel=1e-12)
    # a candidate a clear 0.25 worse is not shown non-inferior; a wider margin changes that
    worse = [0] * 12 + pick[12:]
    assert non_inferiority(worse, pick, 0.05) > 0.5 and non_inferiority(worse, pick, 0.6) < 0.05


def test_two_configurations_that_agree_on_every_needle_are_non_inferior_without_a_spread():
    values = [1, 0, 1, 1]
    assert non_inferiority(values, values, 0.05) == 0.0
    assert non_inferiority([v - 0.1 for v in values], values, 0.05) == 1.0  # the same -0.1 on every needle
    assert non_inferiority([], [], 0.05) == 1.0
    with pytest.raises(ValueError):
        non_inferiority([1], [1, 0])


def test_cost_ratio_is_latency_over_the_picks():
    assert cost_ratio(row(latency=97), row(latency=648)) == pytest.approx(97 / 648)
    assert cost_ratio(row(latency=None), row()) is None
