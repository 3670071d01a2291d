"""The verdict an evaluation ends with, the decision first: at the context budget, which configuration
to ship, by how much over the next and how sure; what it costs; the questions the field asks of a corpus,
each with its adjusted p; when the pick refuses; what changed since the previous run. About 30 lines
(``rag-assets report`` keeps the full tables); read from the stored ``decision``, ``ranking`` and
``comparisons`` (``decision.py``, ``comparisons.py``)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from rag_assets.lib.evalsets.relocation import HELD
from rag_assets.lib.evaluate.comparisons import DIFFERENCE_FAMILIES, QUESTIONS, adjustment_label, name_of
from rag_assets.lib.evaluate.decision import stored_decision, stored_ranking
from rag_assets.lib.evaluate.measures import paired_comparisons, suggested_cuts, table_exists
from rag_assets.lib.evaluate.needle_changes import change_lines, latest_needle_changes
from rag_assets.lib.evaluate.power import Sensitivity
from rag_assets.lib.evaluate.regressions import latest_regressions
from rag_assets.lib.evaluate.size_view import FIXED_K, size_lines
from rag_assets.lib.retrieve.engine import gate_of

MAX_EQUALS = 6  # configurations named as not distinguishable from the pick; the rest counted


def _interval(value: float, low: float, high: float) -> str:
    return f"{value:.3f} [{low:.2f}, {high:.2f}]"


def _configuration(row: dict) -> tuple[str, str, str]:
    return row["model"], row["strategy"], row["retriever"]


def _test(row: dict) -> str:
    return (f"{row['a_value']:.3f} vs {row['b_value']:.3f}, +{row['wins']}/-{row['losses']} needles, "
            f"adjusted p = {row['p_adjusted']:.2g}")


def _costs(connection: duckdb.DuckDBPyConnection, pick: dict, budget: int) -> str:
    embedded = ""
    if table_exists(connection, "chunk_stats"):
        cursor = connection.execute("SELECT * FROM chunk_stats WHERE model = ? AND strategy = ?",
                                    [pick["model"], pick["strategy"]])
        found = cursor.fetchone()
        if found:
            row = dict(zip([column[0] for column in cursor.description], found))
            seconds = row.get("embedding_seconds")
            embedded = f", {row['tokens_embedded']:,} tokens embedded for the index" + (
                f" ({seconds:.1f} s at {row['embedding_tokens_per_second']:,.0f} tokens/s, measured here)"
                if seconds is not None else " (embedding rate not measured)")
    return (f"costs {pick['context_tokens']:.0f} context tokens a question (of {budget}){embedded}, "
            f"{pick['median_latency_ms']:.1f} ms median per query")


def stored_sensitivity(decision: dict, prefix: str) -> Sensitivity | None:
    """The ``power.Sensitivity`` stored in the decision for ``prefix`` (runner_up, equivalent); None without."""
    needles = decision.get(f"{prefix}_needles")
    if not needles:
        return None
    rate, difference = decision[f"{prefix}_discordant_rate"], decision[f"{prefix}_difference"]
    wins, losses = round(needles * (rate + difference) / 2), round(needles * (rate - difference) / 2)
    return Sensitivity(needles, wins, losses, rate, difference, decision[f"{prefix}_detectable_difference"],
                       decision[f"{prefix}_needles_needed"], decision["alpha"])


def choice_lines(decision: dict) -> list[str]:
    """How the pick was chosen over a tied runner-up, its cheaper equivalent (or why none), and what the needles
    can tell about the differences: each one line."""
    lines = []
    if decision.get("tied_with"):
        lines.append(f"Tied with {decision['tied_with']} on success and MRR; chosen for {decision['tie_broken_by']}")
    margin, tested = decision.get("margin"), decision.get("cheaper_tested")
    if decision.get("equivalent_model"):
        ratio = decision.get("equivalent_cost_ratio")
        lines.append(f"Cheaper equivalent: {name_of((decision['equivalent_model'], decision['equivalent_strategy'], decision['equivalent_retriever']))}"
                     f", S {decision['equivalent_success']:.3f}, non-inferior within {margin:g} (one-sided, adjusted "
                     f"p = {decision['equivalent_p_adjusted']:.2g})"
                     + (f", at {ratio:.2f}x the pick's latency ({decision['equivalent_latency_ms']:.1f} ms median)"
                        if ratio is not None else ""))
    elif tested:
        lines.append(f"Cheaper equivalent: none of the {tested} cheaper configuration{'s' if tested != 1 else ''} is "
                     f"shown non-inferior within {margin:g}")
    elif tested == 0:
        lines.append("Cheaper equivalent: none is cheaper than the pick")
    for prefix, label in (("runner_up", "runner-up"), ("equivalent", "cheaper equivalent")):
        found = stored_sensitivity(decision, prefix)
        if found is not None:
            lines.append(f"Against the {label}: {found.describe()}")
    return lines


def refusal_lines(connection: duckdb.DuckDBPyConnection, pick: tuple[str, str, str]) -> list[str]:
    """When the pick refuses: its own calibrated cut, or (a retriever without a distance) the cut of the
    retriever whose distance ``ask`` gates it on."""
    cuts = suggested_cuts(connection)
    if cuts is None:
        return []
    model, strategy, retriever = pick
    try:
        gate = gate_of(retriever)
    except ValueError:
        return [f"{name_of(pick)} cannot refuse: {retriever} has no distance, nor has any retriever it builds on"]
    rows = [r for r in cuts.to_pylist() if (r["model"], r["strategy"], r["retriever"]) == (model, strategy, gate)
            and r["cut"] is not None]
    if not rows:
        return [f"{name_of(pick)} has no calibrated refusal cut (no out-of-domain questions, or no {gate} rows)"]
    r = rows[0]
    how = "" if gate == retriever else f" ({retriever} has no distance: it refuses on {gate}'s, of the same index)"
    return [f"{name_of(pick)}: refuse above {gate} distance {r['cut']:.3f}{how}: {r['answered_with_needle']} of "
            f"{r['in_domain']} answered with their needle, {r['bluffs']} of {r['out_of_domain']} out-of-domain "
            "bluffs" + (f" (AUROC {r['auroc']:.2f})" if r["auroc"] is not None else "")]


def _destroyed(connection: duckdb.DuckDBPyConnection, model: str) -> str | None:
    if not table_exists(connection, "chunk_stats"):
        return None
    rows = connection.execute("SELECT strategy, answers_destroyed, needles FROM chunk_stats WHERE model = ? "
                              "ORDER BY strategy", [model]).fetchall()
    return ", ".join(f"{strategy} {destroyed} of {needles}" for strategy, destroyed, needles in rows) or None


def verdict(connection: duckdb.DuckDBPyConnection, home: Path) -> str:
    """The few lines a person reads first after an evaluation."""
    decision, ranking = stored_decision(connection), stored_ranking(connection)
    if decision is None or decision["model"] is None:
        if ranking:
            return (f"Verdict at {decision['budget']} context tokens: no configuration competes, every evaluated "
                    f"strategy's documents are larger than the budget ({len(ranking)} configuration"
                    f"{'s' if len(ranking) != 1 else ''}): evaluate a "
                    "chunked strategy, or raise decision.budget")
        return "Verdict: no built-in configuration was evaluated, nothing to decide."
    budget, alpha = decision["budget"], decision["alpha"]
    competing = [row for row in ranking if row["rank"] is not None]
    pick, family = competing[0], paired_comparisons(connection).to_pylist()
    tests = [t for t in family if t["family"] in DIFFERENCE_FAMILIES]
    non_inferior = [t for t in family if t["family"] == "non_inferiority"]
    significant = [t for t in tests if t["p_adjusted"] is not None and t["p_adjusted"] < alpha]
    lines = [f"Verdict at {budget} context tokens ({decision['tokenizer']}; the needle is the unit, "
             f"{pick['needles']} needles in {pick['queries']} queries; 95% intervals; p adjusted by "
             f"{adjustment_label(decision['adjustment'])} over the {len(family)} tests of this run):",
             f"  Ship {name_of(_configuration(pick))}: S@{budget}t {_interval(pick['success'], pick['success_low'], pick['success_high'])}, "
             f"MRR {_interval(pick['mrr'], pick['mrr_low'], pick['mrr_high'])}; {_costs(connection, pick, budget)}"]
    verdict_tests = {(t["b_model"], t["b_strategy"], t["b_retriever"]): t for t in tests if t["family"] == "verdict"}
    if len(competing) > 1:
        second = competing[1]
        test = verdict_tests.get(_configuration(second))
        lines.append(f"  Runner-up {name_of(_configuration(second))}: S@{budget}t "
                     f"{_interval(second['success'], second['success_low'], second['success_high'])}"
                     + (f"; the pick against it: {_test(test)}" if test else ""))
        equal = [c for c, t in verdict_tests.items() if t["p_adjusted"] >= alpha]
        lines.append(f"  Not distinguishable from the pick (adjusted p >= {alpha:g}): {len(equal)} of "
                     f"{len(competing) - 1}" + (": " + "; ".join(name_of(c) for c in equal[:MAX_EQUALS]) if equal else "")
                     + (f"; ... {len(equal) - MAX_EQUALS} more" if len(equal) > MAX_EQUALS else ""))
    lines += [f"  {line}" for line in choice_lines(decision)]
    left_out = [row for row in ranking if row["rank"] is None]
    if left_out:
        lines.append(f"  Not competing at {budget} tokens (whole documents larger than the budget): "
                     f"{len(left_out)} configuration{'s' if len(left_out) > 1 else ''}, e.g. "
                     f"{name_of(_configuration(left_out[0]))}")
    if table_exists(connection, "size_view"):
        sizes = size_lines(connection.sql("SELECT * FROM size_view").to_arrow_table().to_pylist(), pick["model"],
                           pick["retriever"], budget)
        if sizes:
            lines.append(f"  Chunk size, on {pick['model']} x {pick['retriever']} (success within {budget} tokens, and "
                         f"at k = {FIXED_K[-1]}, where larger chunks win by construction):")
            lines += [f"    {line}" for line in sizes]
    lines.append(f"  Significant after adjustment: {len(significant)} of {len(tests)} difference tests "
                 f"({sum(t['p_value'] < alpha for t in tests)} at raw p < {alpha:g})"
                 + (f"; non-inferior to the pick: {sum(t['p_adjusted'] < alpha for t in non_inferior)} of "
                    f"{len(non_inferior)} cheaper configurations" if non_inferior else ""))
    changes = change_lines(latest_needle_changes(connection))
    if changes:
        lines += ["The needles:", *(f"  {line}" for line in changes)]
    lines.append(f"The questions, on {pick['model']} at {budget} tokens:")
    by_key = {t["comparison"]: t for t in tests if t["family"] == "question"}
    for question in QUESTIONS:
        test = by_key.get(question.key)
        if test:
            lines.append(f"  {question.asks[0].upper() + question.asks[1:]} {test['a_strategy'] if question.by == 'strategy' else test['a_retriever']}"
                         f" vs {test['b_strategy'] if question.by == 'strategy' else test['b_retriever']}: {_test(test)}")
    destroyed = _destroyed(connection, pick["model"])
    if destroyed:
        lines.append(f"  Answers the cutting destroys (no chunk holds the needle whole): {destroyed}")
    for test in (t for t in tests if t["family"] == "external"):
        lines.append(f"  External {test['a_strategy']} against the pick: {_test(test)}")
    gate = refusal_lines(connection, _configuration(pick))
    if gate:
        lines += ["When to refuse:", *(f"  {line}" for line in gate)]
    lines.append(f"Since the previous run: {latest_regressions(connection).summary().splitlines()[0]}")
    lines += [f"Look: the evaluation page {(Path(home).absolute() / 'report' / 'index.html').as_uri()} (open it in a "
              "browser: the decision, budget curves, two configurations side by side, why a query missed)",
              f"Full tables: rag-assets report (--paired); report {home / 'report' / 'report.md'}; "
              f"DuckDB {home / 'metrics.duckdb'}; UI: rag-assets ui"]
    return "\n".join(lines)


def decision_summary(connection: duckdb.DuckDBPyConnection) -> str:
    """The decision in a few Markdown lines, for the first entry of the metrics asset's page in the UI: what to
    ship at the budget with its figures, the runner-up and the test between them, how many tests hold."""
    decision, ranking = stored_decision(connection), stored_ranking(connection)
    if decision is None or decision["model"] is None:
        return "**No decision**: " + verdict_without_pick(decision, ranking)
    budget, alpha = decision["budget"], decision["alpha"]
    competing = [row for row in ranking if row["rank"] is not None]
    pick, tests = competing[0], paired_comparisons(connection).to_pylist()
    tests = [t for t in tests if t["family"] in DIFFERENCE_FAMILIES]
    lines = [f"**Ship {name_of(_configuration(pick))}** at {budget} tokens",
             f"Success {_interval(pick['success'], pick['success_low'], pick['success_high'])}, MRR "
             f"{_interval(pick['mrr'], pick['mrr_low'], pick['mrr_high'])} over {pick['needles']} needles "
             f"({decision['tokenizer']}); {pick['context_tokens']:.0f} context tokens a question, "
             f"{pick['median_latency_ms']:.1f} ms median per query."]
    if len(competing) > 1:  # the runner-up first: the lines below refer to it
        second = competing[1]
        test = next((t for t in tests if t["family"] == "verdict" and
                     (t["b_model"], t["b_strategy"], t["b_retriever"]) == _configuration(second)), None)
        lines.append(f"Runner-up {name_of(_configuration(second))}: "
                     f"{_interval(second['success'], second['success_low'], second['success_high'])}"
                     + (f"; the pick against it {_test(test)}" if test else "") + ".")
    lines += choice_lines(decision)
    significant = sum(t["p_adjusted"] is not None and t["p_adjusted"] < alpha for t in tests)
    lines.append(f"{significant} of {len(tests)} paired tests significant after "
                 f"{adjustment_label(decision['adjustment'])}.")
    lost = [c for c in latest_needle_changes(connection) if c["status"] not in HELD]
    if lost:
        lines.append(f"{len(lost)} needle{'s' if len(lost) != 1 else ''} left out: the corpus no longer holds "
                     f"{'them' if len(lost) != 1 else 'it'} as written ({', '.join(c['needle_id'] for c in lost[:5])}"
                     f"{', ...' if len(lost) > 5 else ''}; see the verdict).")
    return "\n\n".join(lines)


def verdict_without_pick(decision: dict | None, ranking: list[dict]) -> str:
    if decision is not None and ranking:
        return (f"no configuration competes at {decision['budget']} context tokens: every evaluated strategy's "
                "documents are larger than the budget.")
    return "no built-in configuration was evaluated."

