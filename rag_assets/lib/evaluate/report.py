"""The comparison report: plots and a Markdown file people can look at, the decision first.

Three figures: success against the context budget for the top configurations of the decision's ranking,
with their 95 % intervals over needles; success@k curves per chunking strategy (the pick's model and
retriever); per-retriever bars (success@1, success@4, MRR with their intervals) for the pick's model and
strategy. The Markdown report holds the verdict, the main table, the paired tests, the strategies' costs
and the figures (as files beside it).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from rag_assets.lib.embed.models import DEFAULT_MODEL
from rag_assets.lib.evaluate.catalog import K_VALUES, budget_measure, budgets_in, measure
from rag_assets.lib.evaluate.comparisons import adjustment_label
from rag_assets.lib.evaluate.decision import DecisionRule
from rag_assets.lib.evaluate.refusal import RULE
from rag_assets.lib.evaluate.tables import (
    format_chunk_stats,
    format_comparisons,
    format_suggested_cuts,
    format_table,
)
from rag_assets.lib.formats.figures import png_bytes, pyplot
from rag_assets.lib.retrieve.context import TOKENIZER

# what the report draws when no decision was made (no built-in configuration): the defaults
REPORT_STRATEGY = "boundaries_header"
STRATEGY_RETRIEVER = "dense"
TOP_CONFIGURATIONS = 6  # drawn against the budget


def budget_curves(table: pa.Table, ranking: list[dict], rule: DecisionRule) -> bytes:
    """success against the context budget, one line per configuration of the ranking's top, with interval
    bars; the decision's budget marked."""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.2))
    by_name = {(r["model"], r["strategy"], r["retriever"]): r for r in table.to_pylist()}
    budgets = rule.all_budgets
    top = [r for r in ranking if r["rank"] is not None][:TOP_CONFIGURATIONS]
    for offset, chosen in enumerate(top):
        row = by_name[(chosen["model"], chosen["strategy"], chosen["retriever"])]
        names = [budget_measure(b).name for b in budgets]
        xs = [b * (1 + 0.015 * (offset - len(top) / 2)) for b in budgets]
        values = [row[n] for n in names]
        low = [max(0.0, v - row[f"{n}_low"]) for v, n in zip(values, names)]
        high = [max(0.0, row[f"{n}_high"] - v) for v, n in zip(values, names)]
        axes.errorbar(xs, values, yerr=[low, high], marker="o", capsize=3,
                      label=f"#{chosen['rank']} {chosen['model']}: {chosen['strategy']} x {chosen['retriever']}")
    axes.axvline(rule.budget, color="grey", linestyle="--", linewidth=1)
    axes.set_xscale("log")
    axes.set_xticks(list(budgets), [str(b) for b in budgets])
    axes.set_xlabel(f"context budget (tokens, {TOKENIZER})")
    axes.set_ylabel("success: the needle's chunk in the context")
    axes.set_ylim(0, 1)
    axes.set_title("Success against context budget, 95 % intervals over needles")
    axes.grid(alpha=0.3)
    if top:
        axes.legend(fontsize=7, loc="lower right")
    return png_bytes(figure)


def success_curves(table: pa.Table, model: str, retriever: str = STRATEGY_RETRIEVER) -> bytes:
    """success@k against k, one line per strategy, with interval bars. ``table``: a comparison by
    model, strategy and retriever."""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.2))
    rows = [r for r in table.to_pylist() if r["model"] == model and r["retriever"] == retriever]
    for offset, row in enumerate(sorted(rows, key=lambda r: r["strategy"])):
        ks = [k * (1 + 0.015 * (offset - len(rows) / 2)) for k in K_VALUES]  # nudge to keep bars apart
        values = [row[f"success_at_{k}"] for k in K_VALUES]
        low = [max(0.0, v - row[f"success_at_{k}_low"]) for v, k in zip(values, K_VALUES)]
        high = [max(0.0, row[f"success_at_{k}_high"] - v) for v, k in zip(values, K_VALUES)]
        axes.errorbar(ks, values, yerr=[low, high], marker="o", capsize=3, label=row["strategy"])
    axes.set_xscale("log")
    axes.set_xticks(list(K_VALUES), [str(k) for k in K_VALUES])
    axes.set_xlabel("k")
    axes.set_ylabel("success@k (= recall@k for one needle)")
    axes.set_ylim(0, 1)
    axes.set_title(f"{model}, {retriever}: success@k with Wilson 95 % intervals over needles")
    axes.grid(alpha=0.3)
    if rows:
        axes.legend(fontsize=8, loc="lower right")
    return png_bytes(figure)


def retriever_bars(table: pa.Table, model: str, strategy: str) -> bytes:
    plt = pyplot()
    rows = sorted((r for r in table.to_pylist() if r["model"] == model and r["strategy"] == strategy),
                  key=lambda r: r["retriever"])
    measures = [(name, measure(name).label) for name in ("success_at_1", "success_at_4", "mrr")]
    figure, axes = plt.subplots(figsize=(7, 4.2))
    width = 0.8 / max(len(rows), 1)
    for index, row in enumerate(rows):
        positions = [m + index * width for m in range(len(measures))]
        values = [row[m] for m, _ in measures]
        # an interval end computed a rounding error past its point (Wilson's at 1.0) is an error bar of 0
        errors = [[max(0.0, v - row[f"{m}_low"]) for v, (m, _) in zip(values, measures)],
                  [max(0.0, row[f"{m}_high"] - v) for v, (m, _) in zip(values, measures)]]
        axes.bar(positions, values, width, yerr=errors, capsize=3, label=row["retriever"])
    axes.set_xticks([m + width * (len(rows) - 1) / 2 for m in range(len(measures))], [label for _, label in measures])
    axes.set_ylim(0, 1)
    axes.set_title(f"{model}, {strategy}: retrievers with 95 % intervals")
    axes.grid(axis="y", alpha=0.3)
    if rows:
        axes.legend(fontsize=8)
    return png_bytes(figure)


def inline(png: bytes, alt: str) -> str:
    """A Markdown image carrying the PNG itself (the Dagster UI renders it in the asset page)."""
    return f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})"


def write_report(folder: Path, sections: list[tuple[str, str]], images: dict[str, bytes]) -> Path:
    """``report.md`` with the sections (title, Markdown) and the images as files beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, png in images.items():
        (folder / name).write_bytes(png)
    body = ["# rag_assets evaluation report", ""]
    for title, markdown in sections:
        body += [f"## {title}", "", markdown, ""]
    body += [f"![{name}]({name})" for name in images]
    path = folder / "report.md"
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    return path


@dataclass
class Report:
    model: str
    strategy: str
    sections: dict[str, str]  # title -> Markdown
    images: dict[str, bytes]  # file name -> PNG
    path: Path


def focus(configurations: list[tuple[str, str]], ranking: list[dict] | None = None) -> tuple[str, str, str]:
    """The (model, strategy, retriever) the report draws: the decision's pick, else the defaults when present,
    else the first of each."""
    picked = next((r for r in ranking or [] if r["rank"] == 1), None)
    if picked:
        return picked["model"], picked["strategy"], picked["retriever"]
    models = sorted({model for model, _ in configurations})
    strategies = sorted({strategy for _, strategy in configurations})
    return (DEFAULT_MODEL if DEFAULT_MODEL in models else models[0],
            REPORT_STRATEGY if REPORT_STRATEGY in strategies else strategies[0], STRATEGY_RETRIEVER)


REFUSAL_SECTION = "When to refuse"
VERDICT_SECTION = "Verdict"


def build_report(table: pa.Table, paired: pa.Table, costs: pa.Table, configurations: list[tuple[str, str]],
                 folder: Path, cuts: pa.Table | None = None, ranking: list[dict] | None = None,
                 rule: DecisionRule = DecisionRule(), verdict: str = "") -> Report:
    """The verdict, the comparison, paired tests, costs and suggested refusal cuts as Markdown, the plots,
    written to ``folder``."""
    model, strategy, retriever = focus(configurations, ranking)
    images = {"success_at_budget.png": budget_curves(table, ranking or [], rule),
              "success_at_k.png": success_curves(table, model, retriever),
              "retrievers.png": retriever_bars(table, model, strategy)}
    skipped = "" if "cross_encoder" in table.column("retriever").to_pylist() else (
        "\n\nNo cross encoder is configured (`cross_encoder` in the settings): its rows are absent.")
    sections = {VERDICT_SECTION: f"```\n{verdict}\n```" if verdict else "No decision: nothing was evaluated.",
                "Comparison": format_table(best_first(table, rule.measure)) + skipped,
                f"Paired tests at {rule.budget} tokens (one family, p adjusted by {adjustment_label(rule.adjustment)})":
                    format_comparisons(paired),
                "What each strategy costs": format_chunk_stats(costs)}
    if cuts is not None:
        sections[REFUSAL_SECTION] = format_suggested_cuts(cuts) + f"\n\nThe suggested cut: {RULE}."
    return Report(model, strategy, sections, images, write_report(folder, list(sections.items()), images))


def best_first(table: pa.Table, measure: str) -> pa.Table:
    """The comparison sorted by the decision's measure, best first, with the decision's ties (MRR, then the
    smaller context at the budget, then the names); a table without the measure (no budget computed) as it is."""
    if measure not in table.column_names:
        return table
    budget = (budgets_in([measure]) or (0,))[0]
    keys = [(measure, "descending"), ("mrr", "descending"), (f"context_at_{budget}_tokens", "ascending"),
            ("model", "ascending"), ("strategy", "ascending"), ("retriever", "ascending")]
    return table.sort_by([(name, order) for name, order in keys if name in table.column_names])


def plots_markdown(report: Report) -> str:
    return "\n\n".join(inline(png, name.removesuffix(".png")) for name, png in report.images.items())


def headline(table: pa.Table, ranking: list[dict], rule: DecisionRule) -> dict:
    """The pick's figures at the budget (plotted over time on the asset's page in the UI)."""
    picked = next((r for r in ranking if r["rank"] == 1), None)
    if picked is None:
        return {}
    name = rule.measure
    return {"shipped": f"{picked['model']}: {picked['strategy']} x {picked['retriever']}",
            name: float(picked[name]), "mrr": float(picked["mrr"]),
            f"context_at_{rule.budget}_tokens": float(picked[f"context_at_{rule.budget}_tokens"])}
