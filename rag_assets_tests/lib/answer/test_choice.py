"""Which configuration `ask` answers with: the verdict's pick at its budget, or the best ranked one within what
the command named, at the calibrated cut of its gate (a retriever without a distance refuses on its input's)."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.answer.ask import AskError
from rag_assets.lib.answer.choice import Choice, calibrated_cut, default_configuration
from rag_assets.lib.evaluate.decision import DecisionRule, write_decision
from rag_assets.lib.evaluate.measures import write_chunk_stats, write_results, write_threshold_sweep
from rag_assets_tests.lib.evaluate.needle_rows import configuration, table

RULE = DecisionRule(budget=512, budgets=(512,))


@pytest.fixture
def connection():
    rows = table(
        configuration("m1", "boundaries", "hybrid", [1, 1, 2, None]),       # S@512 0.75, MRR 0.625: the pick
        configuration("m1", "boundaries", "dense", [1, 2, 2, None]),        # S@512 0.75, MRR 0.5
        configuration("m1", "blind", "dense", [2, 2, 6, 6]),                # 100-token chunks: rank 6 is past 512
        configuration("m2", "boundaries", "bm25", [1, 1, 1, 1]),           # the best, but bm25 cannot refuse
        configuration("m2", "document", "dense", [1, 1, 1, 1], chunk_tokens=2000),  # pages larger than the budget
    )
    with duckdb.connect() as connection:
        write_results(connection, rows, budgets=RULE.all_budgets)
        write_chunk_stats(
            connection, pa.Table.from_pylist([{"model": "m2", "strategy": "document", "tokens": 1, "header_tokens": 0,
                                               "truncated": False}]),
            pa.Table.from_pylist([{"strategy": "document", "chunks": 4, "mean_characters": 1.0, "max_characters": 1,
                                   "mean_content_tokens": 2000.0, "max_content_tokens": 2000, "needles": 4,
                                   "answers_destroyed": 0, "destroyed_needles": []}]))
        write_decision(connection, RULE)
        yield connection


def test_without_options_ask_answers_with_the_verdicts_pick_at_its_budget(connection):
    write_decision(connection, RULE)
    connection.execute("DELETE FROM ranking WHERE retriever = 'bm25'")  # as if BM25 had not been evaluated
    connection.execute("UPDATE ranking SET rank = rank - 1 WHERE rank > 1")
    assert default_configuration(connection) == Choice("m1", "boundaries", "hybrid", 512,
                                                       "the verdict's pick at 512 context tokens")


def test_a_pick_that_cannot_refuse_is_passed_over_for_the_best_that_can_and_ask_says_so(connection):
    # m2 x boundaries x bm25 finds every needle first: the pick, but BM25 has no distance to say no with
    assert default_configuration(connection) == Choice(
        "m1", "boundaries", "hybrid", 512, "ranked #2 at 512 context tokens, the best that can refuse (#1, m2: "
        "boundaries x bm25, has no distance to refuse on)")


def test_what_was_named_narrows_the_choice_to_the_best_ranked_within_it(connection):
    chosen = default_configuration(connection, model="m1")
    assert (chosen.model, chosen.strategy, chosen.retriever) == ("m1", "boundaries", "hybrid")
    assert chosen.why == "ranked #2 at 512 context tokens, the best within what was given"
    assert default_configuration(connection, retriever="dense", model="m1").strategy == "boundaries"
    pages = default_configuration(connection, strategy="document")
    assert pages.why == "its documents do not fit 512 context tokens, so it does not compete there"


def test_nothing_evaluated_for_what_was_named_is_an_error_naming_it(connection):
    with pytest.raises(AskError, match="no ranked configuration that can refuse for model m3, strategy any, retriever any"):
        default_configuration(connection, model="m3")


def _sweep(retriever: str, cut: float) -> dict:
    return {"model": "m1", "revision": "r", "strategy": "boundaries", "retriever": retriever, "cut": cut,
            "in_domain": 4, "out_of_domain": 0, "answered_with_needle": 4, "answered_without_needle": 0,
            "in_domain_refused": 0, "bluffs": 0, "bluffs_near": 0, "bluffs_off_topic": 0, "worst_in_domain": 0.3,
            "best_out_of_domain": None, "separable": True, "auroc": None, "auroc_low": None, "auroc_high": None,
            "suggested": True}


def test_the_cut_is_that_of_the_configurations_gate_and_one_without_a_gate_is_refused(connection):
    with pytest.raises(AskError, match="no calibrated cut for m1 x boundaries x dense: give --cut"):
        calibrated_cut(connection, "m1", "boundaries", "dense")
    write_threshold_sweep(connection, pa.Table.from_pylist([_sweep("dense", 0.45), _sweep("ann", 0.3)]))
    assert calibrated_cut(connection, "m1", "boundaries", "dense") == 0.45
    assert calibrated_cut(connection, "m1", "boundaries", "hybrid") == 0.45  # hybrid refuses on dense's distance
    with pytest.raises(AskError, match="'bm25' has no distance to gate on, nor has any retriever it builds on"):
        calibrated_cut(connection, "m2", "boundaries", "bm25")
