"""The decision: at the context budget, the configuration with the highest success there, by the stated tie
rule; a whole-document configuration competes only where its documents fit; recomputed here from the rows."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.decision import DecisionRule, rank_configurations, stored_decision, write_decision
from rag_assets.lib.evaluate.measures import write_chunk_stats, write_results
from rag_assets_tests.lib.evaluate.needle_rows import configuration, success_by_hand, table

N = 10


def _chunk_stats(connection, largest: dict[str, int]) -> None:
    models = ("m0", "m1", "m2")
    tokens = pa.Table.from_pylist([{"model": m, "strategy": s, "tokens": 10, "header_tokens": 0, "truncated": False}
                                   for m in models for s in largest])
    quality = pa.Table.from_pylist([{"strategy": s, "chunks": 1, "mean_characters": 1.0, "max_characters": 1,
                                     "mean_content_tokens": float(t), "max_content_tokens": t, "needles": N,
                                     "answers_destroyed": 0, "destroyed_needles": []} for s, t in largest.items()])
    write_chunk_stats(connection, tokens, quality)


@pytest.fixture
def connection():
    rows = table(
        # chunks of 300 tokens: 1024 tokens hold the top 3; needles at ranks 1-4, then misses: S@1024 = 0.3
        configuration("m1", "boundaries", "dense", [1, 2, 3, 4] + [None] * 6, chunk_tokens=300),
        # whole pages of 3,000 tokens, every needle's page first: S@20 = 1, but 1024 tokens hold no page
        configuration("m1", "document", "dense", [1] * N, chunk_tokens=3000),
        # chunks of 100 tokens, every needle at rank 5 (500 tokens of context): S@1024 = 1, MRR 0.2
        configuration("m1", "blind", "dense", [5] * N, chunk_tokens=100),
        # the same success and MRR with chunks of 90 tokens: the cheaper context (990 tokens, not 1000) first
        configuration("m2", "blind", "dense", [5] * N, chunk_tokens=90),
        # exactly m2's figures under a model named before it: the names decide
        configuration("m0", "blind", "dense", [5] * N, chunk_tokens=90),
        # a higher MRR at the same success: ranked above all of the above
        configuration("m2", "blind", "hybrid", [1] + [5] * (N - 1), chunk_tokens=100),
    )
    with duckdb.connect() as connection:
        write_results(connection, rows, budgets=(256, 1024, 4096))
        _chunk_stats(connection, {"boundaries": 400, "document": 3000, "blind": 100})
        yield connection


def test_the_pick_is_the_highest_success_at_the_budget_then_mrr_then_the_cheaper_context_then_the_name(connection):
    ranked = rank_configurations(connection, DecisionRule(budget=1024, budgets=(256, 1024, 4096)))
    order = [(r["model"], r["strategy"], r["retriever"]) for r in ranked if r["rank"] is not None]
    assert order == [("m2", "blind", "hybrid"), ("m0", "blind", "dense"), ("m2", "blind", "dense"),
                     ("m1", "blind", "dense"), ("m1", "boundaries", "dense")]
    assert [r["rank"] for r in ranked] == [1, 2, 3, 4, 5, None]
    # the whole pages do not fit 1024 tokens: they do not compete, and stay in the ranking (last)
    assert (ranked[-1]["strategy"], ranked[-1]["competes"]) == ("document", False)
    assert ranked[-1]["success_at_20"] == 1.0 and ranked[-1]["success_at_1024_tokens"] == 0.0


def test_pages_compete_where_they_fit_and_a_small_budget_holds_fewer_chunks(connection):
    at_4096 = rank_configurations(connection, DecisionRule(budget=4096, budgets=(256, 1024, 4096)))
    pages = next(r for r in at_4096 if r["strategy"] == "document")
    assert pages["competes"] and pages["success_at_4096_tokens"] == 1.0
    assert pages["rank"] == 1  # S@4096 1.0 and MRR 1.0: the page fits, and is the answer there
    at_256 = {(r["model"], r["strategy"], r["retriever"]): r
              for r in rank_configurations(connection, DecisionRule(budget=256, budgets=(256, 1024, 4096)))}
    # 256 tokens hold no chunk of 300 (an empty context, never a chunk cut to fit) and two of 100
    assert at_256[("m1", "boundaries", "dense")]["success_at_256_tokens"] == 0.0
    assert at_256[("m1", "boundaries", "dense")]["context_at_256_tokens"] == 0.0
    assert at_256[("m2", "blind", "hybrid")]["success_at_256_tokens"] == pytest.approx(0.1)  # rank 1 only


def test_the_stored_pick_recomputed_from_the_stored_rows(connection):
    rule = DecisionRule(budget=1024, budgets=(256, 1024, 4096))
    write_decision(connection, rule)
    decision = stored_decision(connection)
    # by hand, from retrieval_results (the whole pages do not compete at 1024 tokens)
    success = {c: v for c, v in success_by_hand(connection, 1024).items() if c[1] != "document"}
    best = max(success.values())
    assert success[(decision["model"], decision["strategy"], decision["retriever"])] == best
    assert (decision["budget"], decision["measure"], decision["adjustment"]) == (1024, "success_at_1024_tokens", "holm")
    assert decision["tokenizer"] == "cl100k_base (tiktoken)"


def test_a_rule_with_a_bad_budget_or_adjustment_is_refused():
    with pytest.raises(ValueError, match="unknown adjustment 'bonferroni'"):
        DecisionRule(adjustment="bonferroni")
    with pytest.raises(ValueError, match="positive number of tokens"):
        DecisionRule(budget=0)
    assert DecisionRule(budget=700, budgets=(256, 1024)).all_budgets == (256, 700, 1024)
