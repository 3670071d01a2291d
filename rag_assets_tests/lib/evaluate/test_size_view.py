"""The size view: success within the budget against chunk size, one line per family, the same figures the
comparison stores; at fixed k larger chunks win by construction, within the budget they need not."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.decision import DecisionRule, rank_configurations, write_decision
from rag_assets.lib.evaluate.measures import comparison, write_chunk_stats, write_results
from rag_assets.lib.evaluate.size_view import (
    size_lines,
    size_view_rows,
    strategy_rows,
    swept_families,
    whole_strategies,
    write_size_view,
    write_strategies,
)
from rag_assets.lib.ingest.chunking import STRATEGIES, Strategy
from rag_assets_tests.lib.evaluate.needle_rows import configuration, success_by_hand, table

N = 10
SWEEP = {
    "bh-128t-o0": Strategy("bh-128t-o0", target=128, boundaries=True, unit="tokens", family="bh"),
    "bh-512t-o0": Strategy("bh-512t-o0", target=512, boundaries=True, unit="tokens", family="bh"),
    "bh-512t-o128": Strategy("bh-512t-o128", target=512, overlap=128, boundaries=True, unit="tokens", family="bh"),
    "pages": Strategy("pages", whole=True),
    "lc": Strategy("lc", target=256, unit="tokens", kind="langchain", splitter="RecursiveCharacterTextSplitter"),
}


@pytest.fixture
def connection():
    rows = table(
        # small chunks: needles found at rank 6 (6 x 128 = 768 tokens fit 1024) but not in the top 4
        configuration("m", "bh-128t-o0", "dense", [6] * N, chunk_tokens=128),
        # large chunks: every needle at rank 2 (1,000 tokens: fits), S@4 = 1
        configuration("m", "bh-512t-o0", "dense", [2] * N, chunk_tokens=500),
        # large chunks with overlap: rank 3, 1,500 tokens do not fit 1024 though S@4 = 1
        configuration("m", "bh-512t-o128", "dense", [3] * N, chunk_tokens=500),
        configuration("m", "pages", "dense", [1] * N, chunk_tokens=3000),
        configuration("m", "lc", "dense", [1] * 5 + [None] * 5, chunk_tokens=250),
    )
    with duckdb.connect() as connection:
        write_results(connection, rows, budgets=(1024,))
        tokens = pa.Table.from_pylist([{"model": "m", "strategy": s, "tokens": 10 * (i + 1), "header_tokens": 0,
                                        "truncated": False} for i, s in enumerate(SWEEP)])
        quality = pa.Table.from_pylist([{"strategy": s, "chunks": 1, "mean_characters": 1.0, "max_characters": 1,
                                         "mean_content_tokens": 1.0, "max_content_tokens": 3000 if s == "pages" else 500,
                                         "needles": N, "answers_destroyed": 0, "destroyed_needles": []} for s in SWEEP])
        write_chunk_stats(connection, tokens, quality)
        write_strategies(connection, strategy_rows(SWEEP, {"lc": "langchain-text-splitters 1.1.3"}))
        yield connection


def test_each_point_is_the_comparisons_own_figures_with_its_family_size_and_cost(connection):
    rows = size_view_rows(connection, 1024)
    assert [(r["family"], r["size"], r["overlap"]) for r in rows] == [
        ("bh", 128, 0), ("bh", 512, 0), ("bh", 512, 128), ("lc", 256, 0)]  # whole pages are no size
    stored = {(r["strategy"]): r for r in comparison(connection).to_pylist()}
    by_hand = success_by_hand(connection, 1024)
    for row in rows:
        assert row["success"] == stored[row["strategy"]]["success_at_1024_tokens"] == by_hand[
            ("m", row["strategy"], "dense")]
        assert (row["success_low"], row["success_high"]) == (stored[row["strategy"]]["success_at_1024_tokens_low"],
                                                             stored[row["strategy"]]["success_at_1024_tokens_high"])
        assert row["success_at_4"] == stored[row["strategy"]]["success_at_4"]
    assert {r["strategy"]: r["success"] for r in rows} == {"bh-128t-o0": 1.0, "bh-512t-o0": 1.0,
                                                           "bh-512t-o128": 0.0, "lc": 0.5}
    assert {r["strategy"]: r["success_at_4"] for r in rows}["bh-128t-o0"] == 0.0  # fixed k favours large chunks
    assert rows[0]["tokens_embedded"] == 10 and rows[-1]["kind"] == "langchain"


def test_the_pick_on_a_sweep_is_its_highest_success_within_the_budget(connection):
    write_decision(connection, DecisionRule(budget=1024, budgets=(1024,)))
    ranked = rank_configurations(connection, DecisionRule(budget=1024, budgets=(1024,)))
    by_hand = success_by_hand(connection, 1024)
    competing = [r for r in ranked if r["rank"] is not None]
    assert competing[0]["success_at_1024_tokens"] == max(by_hand[("m", r["strategy"], "dense")] for r in competing)
    # a strategy of the file that cuts nothing is whole, as the built-in document is
    assert whole_strategies(connection) == {"pages"}
    assert [r["strategy"] for r in ranked if r["rank"] is None] == ["pages"]


def test_the_verdicts_lines_are_one_per_swept_family_and_the_table_is_written(connection):
    rows = write_size_view(connection, 1024)
    assert connection.sql("SELECT count(*) FROM size_view").fetchall() == [(len(rows),)]
    assert list(swept_families(rows)) == [("m", "dense", "bh")]  # lc has one size: no line of its own
    [line] = size_lines(rows, "m", "dense", 1024)
    assert line.startswith("bh (ours): 128t: S@1024t 1.00 [") and "512t+128: S@1024t 0.00 [" in line
    assert size_lines(rows, "other", "dense", 1024) == []


def test_without_a_strategies_table_the_built_in_whole_strategy_is_the_whole_one():
    with duckdb.connect() as connection:
        assert whole_strategies(connection) == {name for name, s in STRATEGIES.items() if s.whole} == {"document"}
        assert size_view_rows(connection, 1024) == []
