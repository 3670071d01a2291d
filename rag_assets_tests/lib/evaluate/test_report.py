"""The report: the comparison, the paired tests, the costs and the refusal cuts as Markdown beside two
plots, drawn for the default configuration when it was evaluated."""

import duckdb
import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.comparisons import write_comparisons
from rag_assets.lib.evaluate.measures import comparison, write_results
from rag_assets.lib.evaluate.report import REFUSAL_SECTION, build_report, focus, headline
from rag_assets_tests.lib.evaluate.test_measures import SCHEMA

COSTS = pa.Table.from_pylist([{
    "model": "all-MiniLM-L6-v2", "strategy": "boundaries_header", "chunks": 12, "mean_characters": 410.4,
    "max_characters": 512, "tokens_embedded": 1200, "header_tokens": 96, "header_token_share": 0.08,
    "truncated_chunks": 1, "needles": 3, "answers_destroyed": 1, "destroyed_needles": ["n3"]}])


def _evaluated(models=("all-MiniLM-L6-v2",), strategies=("blind", "boundaries_header")):
    rows = [{"query_id": f"q{i}", "query_kind": "needle", "hit_rank": rank, "relevant_ranks": [rank] if rank else [],
             "relevant_total": 1, "phrasing": "doc", "retriever": retriever, "model": model, "revision": "r",
             "strategy": strategy, "latency_ms": 1.0}
            for model in models for strategy in strategies for retriever in ("dense", "hybrid")
            for i, rank in enumerate([1, 3, None, 2] if strategy == "boundaries_header" else [2, None, None, 5])]
    connection = duckdb.connect()
    write_results(connection, pa.Table.from_pylist(rows, schema=SCHEMA))
    configurations = [(m, s) for m in models for s in strategies]
    return connection, comparison(connection), write_comparisons(connection), configurations


def test_the_report_holds_every_section_and_both_plots(tmp_path):
    _, table, paired, configurations = _evaluated()
    report = build_report(table, paired, COSTS, configurations, tmp_path / "report")
    text = report.path.read_text()
    assert (report.model, report.strategy) == ("all-MiniLM-L6-v2", "boundaries_header")
    for heading in ("## Comparison", "## Paired tests (strategies on dense; retrievers on boundaries_header)",
                    "## What each strategy costs"):
        assert heading in text
    assert REFUSAL_SECTION not in text  # nothing calibrated
    assert "No cross encoder is configured" in text
    assert "| all-MiniLM-L6-v2 | boundaries_header | 12 | 410 | 512 | 1200 | 96 | 8.0 % | 1 | 1 of 3 (n3) |" in text
    for image in ("success_at_k.png", "retrievers.png"):
        assert f"![{image}]({image})" in text
        assert (tmp_path / "report" / image).read_bytes().startswith(b"\x89PNG")


def test_the_headline_is_the_default_configuration(tmp_path):
    _, table, _, configurations = _evaluated()
    figures = headline(table, configurations)
    # boundaries_header x dense: hits at 1, 3 and 2 of 4 queries; MRR (1 + 1/3 + 0 + 1/2) / 4
    assert figures == {"configuration": "all-MiniLM-L6-v2 x boundaries_header x dense", "recall_at_20": 0.75,
                       "mrr": pytest.approx(11 / 24)}


def test_without_the_default_model_or_strategy_the_report_draws_the_first_of_each():
    assert focus([("wordllama", "document"), ("minilm-copy", "blind")]) == ("minilm-copy", "blind")
    assert focus([("wordllama", "boundaries_header"), ("all-MiniLM-L6-v2", "blind")]) == \
        ("all-MiniLM-L6-v2", "boundaries_header")


def test_calibrated_cuts_get_their_section(tmp_path):
    connection, table, paired, configurations = _evaluated()
    cuts = pa.Table.from_pylist([{
        "model": "all-MiniLM-L6-v2", "strategy": "boundaries_header", "retriever": "dense", "worst_in_domain": 0.41,
        "best_out_of_domain": 0.52, "auroc": 0.91, "auroc_low": 0.85, "auroc_high": 0.96, "cut": 0.45,
        "answered_with_needle": 150, "in_domain": 172, "answered_low": 0.81, "answered_high": 0.91,
        "in_domain_refused": 10, "bluffs": 3, "out_of_domain": 40, "bluff_low": 0.03, "bluff_high": 0.2,
        "bluffs_near": 3, "bluffs_off_topic": 0}])
    text = build_report(table, paired, COSTS, configurations, tmp_path / "report", cuts).path.read_text()
    assert f"## {REFUSAL_SECTION}" in text
    assert "| 0.910 [0.85, 0.96] | 0.450 | 150 of 172 [0.81, 0.91] | 10 | 3 of 40 [0.03, 0.20] (3, 0) |" in text
