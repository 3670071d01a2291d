"""The verdict an evaluation ends with: per model the configuration with the higher MRR, and each
significant finding worded with the better side first."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.comparisons import write_comparisons
from rag_assets.lib.evaluate.measures import write_results, write_threshold_sweep
from rag_assets.lib.evaluate.verdict import best_by_model, findings, verdict
from rag_assets_tests.lib.evaluate.test_measures import results_of

# (model, strategy, retriever) -> the hit ranks of its twelve queries
RANKS = {
    # m1: boundaries_header x dense has MRR 0.75 (every other query at rank 1, the rest at rank 2), blind x dense
    # 0.25 (every query at rank 4): the first wins
    ("m1", "boundaries_header", "dense"): [1, 2] * 6,
    ("m1", "blind", "dense"): [4] * 12,
    # m2: the other way round, and its best (MRR 0.5) below m1's: a verdict per model, not one overall
    ("m2", "boundaries_header", "dense"): [None, 3, None, 3] * 3,
    ("m2", "blind", "dense"): [2] * 12,
}


@pytest.fixture
def connection():
    with duckdb.connect() as connection:
        write_results(connection, results_of(RANKS))
        write_comparisons(connection)
        yield connection


def test_the_best_configuration_of_each_model_is_the_one_with_the_higher_mrr(connection):
    best = {row["model"]: (row["strategy"], row["retriever"], round(row["mrr"], 3)) for row in best_by_model(connection)}
    assert best == {"m1": ("boundaries_header", "dense", 0.75), "m2": ("blind", "dense", 0.5)}


def _sweep(model: str, strategy: str, cut: float) -> dict:
    return {"model": model, "revision": "r", "strategy": strategy, "retriever": "dense", "cut": cut, "in_domain": 12,
            "out_of_domain": 4, "answered_with_needle": 11, "answered_without_needle": 0, "in_domain_refused": 1,
            "bluffs": 1, "bluffs_near": 1, "bluffs_off_topic": 0, "worst_in_domain": 0.5, "best_out_of_domain": 0.4,
            "separable": False, "auroc": 0.9, "auroc_low": 0.8, "auroc_high": 1.0, "suggested": True}


def test_the_verdict_names_the_higher_mrr_and_gates_the_best_overall(connection, tmp_path):
    # every model's best configuration has a calibrated cut; the one to refuse with is the best of all (m1's)
    write_threshold_sweep(connection, pa.Table.from_pylist(
        [_sweep("m1", "boundaries_header", 0.61), _sweep("m1", "blind", 0.62), _sweep("m2", "blind", 0.63)]))
    said = verdict(connection, tmp_path).splitlines()
    assert said[0] == "Verdict (best configuration of each model by MRR, with 95% intervals):"
    assert said[1].startswith("  m1: boundaries_header x dense: MRR 0.750 [")
    assert said[2].startswith("  m2: blind x dense: MRR 0.500 [")
    assert "When to refuse:" in said
    assert said[said.index("When to refuse:") + 1] == (
        "  m1 x boundaries_header x dense: refuse above distance 0.610: 11 of 12 answered with their needle, "
        "1 of 4 out-of-domain bluffs (AUROC 0.90)")


def test_a_finding_calls_the_side_with_the_higher_value_better(connection):
    # E vs A at success@8 and @20: m1's header finds all twelve, blind too (rank 4): no discordant query, no finding.
    # m2's header finds six, blind all twelve: blind is better on 6 queries, worse on none (p = 2 / 64 = 0.031)
    said = findings(connection)
    assert said == [
        "m2: blind x dense beats boundaries_header x dense on success@8 (1.000 vs 0.500; better on 6 queries, "
        "worse on 0, p = 0.031; 12 queries)",
        "m2: blind x dense beats boundaries_header x dense on success@20 (1.000 vs 0.500; better on 6 queries, "
        "worse on 0, p = 0.031; 12 queries)"]
    # stored with a = boundaries_header (the lower value): the wording swaps the sides, it does not trust the order
    [stored] = connection.sql("SELECT a_strategy, a_value, b_value, wins, losses FROM comparisons "
                              "WHERE model = 'm2' AND measure = 'success_at_8'").fetchall()
    assert stored == ("boundaries_header", 0.5, 1.0, 0, 6)


def test_a_finding_with_a_better_than_b_keeps_a_first():
    with duckdb.connect() as connection:
        connection.execute(
            "CREATE TABLE comparisons AS SELECT 'm' AS model, 'E vs A' AS comparison, 'boundaries_header' AS a_strategy, "
            "'dense' AS a_retriever, 'blind' AS b_strategy, 'dense' AS b_retriever, 'success_at_8' AS measure, "
            "40 AS queries, 0.9 AS a_value, 0.6 AS b_value, 14 AS wins, 2 AS losses, 0.004 AS p_value")
        assert findings(connection) == [
            "m: boundaries_header x dense beats blind x dense on success@8 (0.900 vs 0.600; better on 14 queries, "
            "worse on 2, p = 0.004; 40 queries)"]
