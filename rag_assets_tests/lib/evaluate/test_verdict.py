"""The verdict: the decision first (the pick at the budget, the runner-up and the test between them, what is
not distinguishable, what it costs), then the field's questions with adjusted p, then the pick's own refusal."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.comparisons import write_comparisons
from rag_assets.lib.evaluate.decision import DecisionRule, write_decision
from rag_assets.lib.evaluate.measures import write_chunk_stats, write_results, write_threshold_sweep
from rag_assets.lib.evaluate.verdict import verdict
from rag_assets_tests.lib.evaluate.needle_rows import configuration, table

MISS = None
RULE = DecisionRule(budget=1024, budgets=(512, 1024))


def _sweep(strategy: str, retriever: str, cut: float) -> dict:
    return {"model": "m", "revision": "r", "strategy": strategy, "retriever": retriever, "cut": cut, "in_domain": 24,
            "out_of_domain": 4, "answered_with_needle": 20, "answered_without_needle": 0, "in_domain_refused": 4,
            "bluffs": 1, "bluffs_near": 1, "bluffs_off_topic": 0, "worst_in_domain": 0.5, "best_out_of_domain": 0.4,
            "separable": False, "auroc": 0.9, "auroc_low": 0.8, "auroc_high": 1.0, "suggested": True}


@pytest.fixture
def connection():
    # twelve needles in two phrasings, chunks of 200 tokens (1024 tokens hold the top 5). boundaries_header x
    # hybrid finds 11 within the budget (the pick), x dense 10; blind x dense 6; a whole-page configuration
    # puts every needle's page first but a page is 5,000 tokens: it does not compete at 1024
    rows = table(
        configuration("m", "boundaries_header", "hybrid", [1] * 11 + [MISS], 200, ("doc", "ticket")),
        configuration("m", "boundaries_header", "dense", [2] * 10 + [MISS] * 2, 200, ("doc", "ticket")),
        configuration("m", "boundaries", "hybrid", [3] * 9 + [MISS] * 3, 200, ("doc", "ticket")),
        configuration("m", "blind", "dense", [4] * 6 + [MISS] * 6, 200, ("doc", "ticket")),
        configuration("m", "document", "dense", [1] * 12, 5000, ("doc", "ticket")),
    )
    with duckdb.connect() as connection:
        write_results(connection, rows, budgets=RULE.all_budgets)
        strategies = {"boundaries_header": 300, "boundaries": 300, "blind": 200, "document": 5000}
        write_chunk_stats(
            connection,
            pa.Table.from_pylist([{"model": "m", "strategy": s, "tokens": 1000, "header_tokens": 0, "truncated": False}
                                  for s in strategies]),
            pa.Table.from_pylist([{"strategy": s, "chunks": 3, "mean_characters": 1.0, "max_characters": 1,
                                   "mean_content_tokens": float(t), "max_content_tokens": t, "needles": 12,
                                   "answers_destroyed": 2 if s == "blind" else 0, "destroyed_needles": []}
                                  for s, t in strategies.items()]),
            pa.table({"model": ["m"], "tokens_per_second": [400.0]}))
        # the pick (hybrid) has no distance: it refuses on dense's of the same index; ann's cut is another's
        write_threshold_sweep(connection, pa.Table.from_pylist(
            [_sweep("boundaries_header", "ann", 0.58), _sweep("boundaries_header", "dense", 0.61)]))
        write_comparisons(connection, write_decision(connection, RULE), RULE)
        yield connection


def test_the_decision_comes_first_with_the_runner_up_and_what_cannot_be_told_apart(connection, tmp_path):
    said = verdict(connection, tmp_path).splitlines()
    assert said[0] == ("Verdict at 1024 context tokens (cl100k_base (tiktoken); the needle is the unit, 12 needles in "
                       "24 queries; 95% intervals; p adjusted by Holm (family-wise error rate) over the 5 tests of "
                       "this run):")
    assert said[1].startswith("  Ship m: boundaries_header x hybrid: S@1024t 0.917 [")
    assert ", MRR 0.917 [" in said[1] and ("costs 1000 context tokens a question (of 1024), 1,000 tokens embedded "
                                          "for the index (2.5 s at 400 tokens/s, measured here)") in said[1]
    # the runner-up, and the pick against it over needles: +1/-0, p = 1 (adjusted, still 1)
    assert said[2].startswith("  Runner-up m: boundaries_header x dense: S@1024t 0.833 [")
    assert said[2].endswith("the pick against it: 0.917 vs 0.833, +1/-0 needles, adjusted p = 1")
    assert said[3].startswith("  Not distinguishable from the pick (adjusted p >= 0.05): 3 of 3: ")
    assert said[4] == "  Cheaper equivalent: none is cheaper than the pick"  # every latency is the same here
    assert said[5].startswith("  Against the runner-up: 12 needles cannot detect at 80 % power even a difference of 0.083")
    assert said[6] == ("  Not competing at 1024 tokens (whole documents larger than the budget): 1 configuration, "
                       "e.g. m: document x dense")


def test_the_questions_are_worded_with_adjusted_p_and_the_pick_refuses_on_its_own_gate(connection, tmp_path):
    said = verdict(connection, tmp_path).splitlines()
    assert "The questions, on m at 1024 tokens:" in said
    assert "  Does the header help? boundaries_header vs boundaries: 0.917 vs 0.750, +2/-0 needles, adjusted p = 1" \
        in said
    assert "  Hybrid against dense? hybrid vs dense: 0.917 vs 0.833, +1/-0 needles, adjusted p = 1" in said
    assert ("  Answers the cutting destroys (no chunk holds the needle whole): blind 2 of 12, boundaries 0 of 12, "
            "boundaries_header 0 of 12, document 0 of 12") in said
    refusal = said[said.index("When to refuse:") + 1]
    assert refusal == ("  m: boundaries_header x hybrid: refuse above dense distance 0.610 (hybrid has no distance: it "
                       "refuses on dense's, of the same index): 20 of 24 answered with their needle, 1 of 4 "
                       "out-of-domain bluffs (AUROC 0.90)")


def test_significance_is_read_from_the_adjusted_p(tmp_path):
    # 40 needles: the pick finds all 40, the other 25: +15/-0, raw p = 6e-5, and still significant adjusted
    rows = table(configuration("m", "boundaries_header", "hybrid", [1] * 40),
                 configuration("m", "boundaries_header", "dense", [1] * 25 + [MISS] * 15))
    with duckdb.connect() as connection:
        write_results(connection, rows, budgets=RULE.all_budgets)
        write_comparisons(connection, write_decision(connection, RULE), RULE)
        said = verdict(connection, tmp_path).splitlines()
        stored = connection.sql("SELECT p_value, p_adjusted FROM comparisons").fetchall()
    assert len(stored) == 2  # the pick against dense, and the question hybrid against dense: the same test
    assert "  Significant after adjustment: 2 of 2 difference tests (2 at raw p < 0.05)" in said
    assert "  Not distinguishable from the pick (adjusted p >= 0.05): 0 of 1" in said


def test_without_a_built_in_configuration_there_is_nothing_to_decide(tmp_path):
    with duckdb.connect() as connection:
        write_results(connection, table(configuration("m", "s", "dense", [1])), budgets=RULE.all_budgets)
        connection.execute("DELETE FROM retrieval_results")
        write_decision(connection, RULE)
        assert verdict(connection, tmp_path) == "Verdict: no built-in configuration was evaluated, nothing to decide."


def test_when_only_pages_larger_than_the_budget_were_evaluated_the_verdict_says_what_to_do(tmp_path):
    with duckdb.connect() as connection:
        write_results(connection, table(configuration("m", "document", "dense", [1] * 4, 5000)),
                      budgets=RULE.all_budgets)
        write_chunk_stats(
            connection,
            pa.Table.from_pylist([{"model": "m", "strategy": "document", "tokens": 1, "header_tokens": 0,
                                   "truncated": False}]),
            pa.Table.from_pylist([{"strategy": "document", "chunks": 4, "mean_characters": 1.0, "max_characters": 1,
                                   "mean_content_tokens": 5000.0, "max_content_tokens": 5000, "needles": 4,
                                   "answers_destroyed": 0, "destroyed_needles": []}]))
        write_decision(connection, RULE)
        assert verdict(connection, tmp_path) == (
            "Verdict at 1024 context tokens: no configuration competes, every evaluated strategy's documents are "
            "larger than the budget (1 configuration): evaluate a chunked strategy, or raise decision.budget")


def test_the_needles_an_edit_lost_or_moved_are_said_before_the_questions_and_in_the_decision(connection, tmp_path):
    from rag_assets.lib.evaluate.needle_changes import write_needle_changes
    from rag_assets.lib.evaluate.verdict import decision_summary

    assert "The needles:" not in verdict(connection, tmp_path)  # every needle kept: nothing to say
    [(run,)] = connection.sql("SELECT run_id FROM evaluation_runs").fetchall()
    write_needle_changes(connection, run, [
        {"needle_id": "n3", "status": "edited", "reason": "edited (0.93 alike)", "successor": "The new sentence."},
        {"needle_id": "n4", "status": "moved", "reason": "moved from a.md to b.md", "doc_id": "b.md",
         "previous_doc_id": "a.md"}])
    said = verdict(connection, tmp_path).splitlines()
    at = said.index("The needles:")
    assert said[at + 1].startswith("  1 needle left out of this evaluation: the corpus no longer holds it")
    assert said[at + 2] == '    n3: edited (0.93 alike); successor offered: "The new sentence."'
    assert said[at + 3] == "  1 needle moved to another page and kept: n4 (a.md -> b.md)"
    assert said[at + 4].startswith("The questions")
    assert "1 needle left out: the corpus no longer holds it as written (n3; see the verdict)." in \
        decision_summary(connection)
