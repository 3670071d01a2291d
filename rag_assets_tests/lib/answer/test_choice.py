"""Which configuration `ask` answers with: the best gated one by MRR (success@4 breaking ties), within what
the command named, at its calibrated cut."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.answer.ask import AskError
from rag_assets.lib.answer.choice import calibrated_cut, default_configuration
from rag_assets.lib.evaluate.measures import write_results, write_threshold_sweep
from rag_assets_tests.lib.evaluate.test_measures import SCHEMA, results_of

# (model, strategy, retriever) -> the hit ranks of its four queries
RANKS = {
    ("m1", "boundaries", "dense"): [1, 2, 2, None],             # MRR 0.5
    ("m1", "boundaries", "late_interaction"): [1, 1, 3, None],  # MRR 0.583: the best gated one
    ("m1", "blind", "dense"): [2, 2, 2, 2],                     # MRR 0.5, but success@4 1.0: beats m1 boundaries dense
    ("m2", "boundaries", "ann"): [5, None, None, None],         # MRR 0.05: the worst
    ("m2", "boundaries", "bm25"): [1, 1, 1, 1],                 # MRR 1.0, but BM25 has no distance to gate on
}


@pytest.fixture
def connection():
    with duckdb.connect() as connection:
        write_results(connection, results_of(RANKS))
        yield connection


def test_the_best_gated_configuration_by_mrr(connection):
    assert default_configuration(connection) == ("m1", "boundaries", "late_interaction")


def test_ties_in_mrr_go_to_success_at_4_and_what_was_named_narrows_the_choice(connection):
    assert default_configuration(connection, retriever="dense") == ("m1", "blind", "dense")
    assert default_configuration(connection, strategy="boundaries", retriever="dense") == ("m1", "boundaries", "dense")
    assert default_configuration(connection, model="m2") == ("m2", "boundaries", "ann")  # bm25 is never chosen


def test_nothing_evaluated_for_what_was_named_is_an_error_naming_it(connection):
    with pytest.raises(AskError, match="no evaluated configuration for model m3, strategy any, retriever dense or "
                                       "ann or late_interaction"):
        default_configuration(connection, model="m3")


def test_the_cut_is_the_suggested_one_and_a_configuration_without_one_is_refused(connection):
    with pytest.raises(AskError, match="no calibrated cut for m1 x blind x dense: give --cut"):
        calibrated_cut(connection, "m1", "blind", "dense")
    sweep = pa.Table.from_pylist([
        {"model": "m1", "revision": "r", "strategy": "blind", "retriever": "dense", "cut": cut, "in_domain": 4,
         "out_of_domain": 0, "answered_with_needle": 4, "answered_without_needle": 0, "in_domain_refused": 0,
         "bluffs": 0, "bluffs_near": 0, "bluffs_off_topic": 0, "worst_in_domain": 0.3, "best_out_of_domain": None,
         "separable": True, "auroc": None, "auroc_low": None, "auroc_high": None, "suggested": cut == 0.45}
        for cut in (0.4, 0.45, 0.5)])
    write_threshold_sweep(connection, sweep)
    assert calibrated_cut(connection, "m1", "blind", "dense") == 0.45


def test_what_was_not_named_reads_any():
    with duckdb.connect() as empty:
        write_results(empty, pa.Table.from_pylist([], schema=SCHEMA))
        with pytest.raises(AskError, match=r"for model any, strategy blind, retriever dense or ann or "
                                           r"late_interaction: run `rag-assets evaluate`"):
            default_configuration(empty, strategy="blind")
