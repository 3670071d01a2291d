"""The report: the verdict first, then the comparison, the paired tests, the costs and the refusal cuts as
Markdown beside three plots (success against the budget, success@k and the retrievers), drawn for the
decision's pick."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.comparisons import write_comparisons
from rag_assets.lib.evaluate.decision import DecisionRule, write_decision
from rag_assets.lib.evaluate.measures import comparison, write_results
from rag_assets.lib.evaluate.report import REFUSAL_SECTION, VERDICT_SECTION, build_report, focus, headline
from rag_assets_tests.lib.evaluate.needle_rows import configuration, table

COSTS = pa.Table.from_pylist([{
    "model": "all-MiniLM-L6-v2", "strategy": "boundaries_header", "chunks": 12, "mean_characters": 410.4,
    "max_characters": 512, "mean_content_tokens": 98.2, "max_content_tokens": 130, "tokens_embedded": 1200,
    "header_tokens": 96, "header_token_share": 0.08, "embedding_tokens_per_second": 800.0,
    "embedding_seconds": 1.5, "truncated_chunks": 1, "needles": 3, "answers_destroyed": 1,
    "destroyed_needles": ["n3"]}])
RULE = DecisionRule(budget=1024, budgets=(256, 1024))


def _evaluated(models=("all-MiniLM-L6-v2",), strategies=("blind", "boundaries_header")):
    rows = table(*(configuration(model, strategy, retriever,
                                 [1, 3, None, 2] if strategy == "boundaries_header" else [2, None, None, 5])
                   for model in models for strategy in strategies for retriever in ("dense", "hybrid")))
    connection = duckdb.connect()
    write_results(connection, rows, budgets=RULE.all_budgets)
    ranking = write_decision(connection, RULE)
    configurations = [(m, s) for m in models for s in strategies]
    return connection, comparison(connection), write_comparisons(connection, ranking, RULE), configurations, ranking


def test_the_report_holds_the_verdict_first_every_section_and_the_three_plots(tmp_path):
    _, table_, paired, configurations, ranking = _evaluated()
    report = build_report(table_, paired, COSTS, configurations, tmp_path / "report", None, ranking, RULE,
                          "Verdict at 1024 context tokens: ship it")
    text = report.path.read_text()
    # the pick: boundaries_header (3 of 4 needles within 1024 tokens), dense before hybrid by name
    assert (report.model, report.strategy) == ("all-MiniLM-L6-v2", "boundaries_header")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [f"## {VERDICT_SECTION}", "## Comparison",
                        "## Paired tests at 1024 tokens (one family, p adjusted by Holm (family-wise error rate))",
                        "## What each strategy costs"]
    assert "```\nVerdict at 1024 context tokens: ship it\n```" in text
    assert REFUSAL_SECTION not in text  # nothing calibrated
    assert "No cross encoder is configured" in text
    assert "| all-MiniLM-L6-v2 | boundaries_header | 12 | 410 | 512 | 98 | 130 | 1200 | 96 | 8.0 % | 1.5 s at 800 tokens/s | 1 | 1 of 3 (n3) |" \
        in text
    assert "S@1024t" in text.split("## Comparison")[1].splitlines()[2]  # a column of the comparison table
    for image in ("success_at_budget.png", "success_at_k.png", "retrievers.png"):
        assert f"![{image}]({image})" in text
        assert (tmp_path / "report" / image).read_bytes().startswith(b"\x89PNG")


def test_the_headline_is_the_picks_figures_at_the_budget():
    _, table_, _, _, ranking = _evaluated()
    figures = headline(table_, ranking, RULE)
    # boundaries_header x dense: hits at 1, 3 and 2 of 4 needles (chunks of 100 tokens fit); MRR (1 + 1/3 + 0 + 1/2) / 4
    assert figures == {"shipped": "all-MiniLM-L6-v2: boundaries_header x dense", "success_at_1024_tokens": 0.75,
                       "mrr": pytest.approx(11 / 24), "context_at_1024_tokens": 1000.0}


def test_without_a_decision_the_report_draws_the_defaults_or_the_first_of_each():
    assert focus([("wordllama", "document"), ("minilm-copy", "blind")]) == ("minilm-copy", "blind", "dense")
    assert focus([("wordllama", "boundaries_header"), ("all-MiniLM-L6-v2", "blind")]) == \
        ("all-MiniLM-L6-v2", "boundaries_header", "dense")
    picked = [{"rank": 1, "model": "wordllama", "strategy": "blind", "retriever": "hybrid"}]
    assert focus([("wordllama", "blind")], picked) == ("wordllama", "blind", "hybrid")


def test_calibrated_cuts_get_their_section(tmp_path):
    _, table_, paired, configurations, ranking = _evaluated()
    cuts = pa.Table.from_pylist([{
        "model": "all-MiniLM-L6-v2", "strategy": "boundaries_header", "retriever": "dense", "worst_in_domain": 0.41,
        "best_out_of_domain": 0.52, "auroc": 0.91, "auroc_low": 0.85, "auroc_high": 0.96, "cut": 0.45,
        "answered_with_needle": 150, "in_domain": 172, "answered_low": 0.81, "answered_high": 0.91,
        "in_domain_refused": 10, "bluffs": 3, "out_of_domain": 40, "bluff_low": 0.03, "bluff_high": 0.2,
        "bluffs_near": 3, "bluffs_off_topic": 0}])
    text = build_report(table_, paired, COSTS, configurations, tmp_path / "report", cuts, ranking, RULE).path.read_text()
    assert f"## {REFUSAL_SECTION}" in text
    assert "| 0.910 [0.85, 0.96] | 0.450 | 150 of 172 [0.81, 0.91] | 10 | 3 of 40 [0.03, 0.20] (3, 0) |" in text


def test_the_comparison_is_shown_best_first_by_the_decisions_measure_with_its_ties():
    from rag_assets.lib.evaluate.report import best_first

    rows = pa.Table.from_pylist([
        {"model": "a", "strategy": "s", "retriever": "dense", "success_at_1024_tokens": 0.5, "mrr": 0.9,
         "context_at_1024_tokens": 900.0},
        {"model": "b", "strategy": "s", "retriever": "dense", "success_at_1024_tokens": 0.8, "mrr": 0.4,
         "context_at_1024_tokens": 900.0},
        {"model": "c", "strategy": "s", "retriever": "dense", "success_at_1024_tokens": 0.8, "mrr": 0.4,
         "context_at_1024_tokens": 700.0},
        {"model": "d", "strategy": "s", "retriever": "dense", "success_at_1024_tokens": 0.8, "mrr": 0.6,
         "context_at_1024_tokens": 990.0},
        {"model": "e", "strategy": "s", "retriever": "dense", "success_at_1024_tokens": None, "mrr": 1.0,
         "context_at_1024_tokens": None}])
    # success first; then MRR; then the smaller context; a configuration without the figure last
    assert best_first(rows, "success_at_1024_tokens").column("model").to_pylist() == ["d", "c", "b", "a", "e"]
    assert best_first(rows.drop_columns(["success_at_1024_tokens"]), "success_at_1024_tokens").equals(
        rows.drop_columns(["success_at_1024_tokens"]))
