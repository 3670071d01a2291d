"""The comparison report: plots and a Markdown file people can look at.

Two figures: success@k curves per chunking strategy (one model, dense retrieval) with Wilson 95 %
interval bars, and per-retriever bars (success@1, success@4, MRR with their intervals) for one model
and strategy. The Markdown report holds the main table, the paired comparisons, the strategies'
costs and both figures (as files beside it).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from rag_assets.lib.embed.models import DEFAULT_MODEL
from rag_assets.lib.evaluate.catalog import K_VALUES, measure
from rag_assets.lib.evaluate.comparisons import (
    REPORT_STRATEGY,
    STRATEGY_RETRIEVER,
    comparisons_heading,
)
from rag_assets.lib.evaluate.refusal import RULE
from rag_assets.lib.evaluate.tables import (
    format_chunk_stats,
    format_comparisons,
    format_suggested_cuts,
    format_table,
)
from rag_assets.lib.formats.figures import png_bytes, pyplot


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
    axes.set_title(f"{model}, {retriever}: success@k with Wilson 95 % intervals")
    axes.grid(alpha=0.3)
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


def focus(configurations: list[tuple[str, str]]) -> tuple[str, str]:
    """The (model, strategy) the report draws: the defaults when present, else the first of each."""
    models = sorted({model for model, _ in configurations})
    strategies = sorted({strategy for _, strategy in configurations})
    return (DEFAULT_MODEL if DEFAULT_MODEL in models else models[0],
            REPORT_STRATEGY if REPORT_STRATEGY in strategies else strategies[0])


REFUSAL_SECTION = "When to refuse"


def build_report(table: pa.Table, paired: pa.Table, costs: pa.Table, configurations: list[tuple[str, str]],
                 folder: Path, cuts: pa.Table | None = None) -> Report:
    """The comparison, paired tests, costs and suggested refusal cuts as Markdown, the plots, written
    to ``folder``."""
    model, strategy = focus(configurations)
    images = {"success_at_k.png": success_curves(table, model), "retrievers.png": retriever_bars(table, model, strategy)}
    skipped = "" if "cross_encoder" in table.column("retriever").to_pylist() else (
        "\n\nNo cross encoder is configured (`cross_encoder` in the settings): its rows are absent.")
    sections = {"Comparison": format_table(table) + skipped,
                comparisons_heading(strategy): format_comparisons(paired, strategy),
                "What each strategy costs": format_chunk_stats(costs)}
    if cuts is not None:
        sections[REFUSAL_SECTION] = format_suggested_cuts(cuts) + f"\n\nThe suggested cut: {RULE}."
    return Report(model, strategy, sections, images, write_report(folder, list(sections.items()), images))


def plots_markdown(report: Report) -> str:
    return "\n\n".join(inline(png, name.removesuffix(".png")) for name, png in report.images.items())


def headline(table: pa.Table, configurations: list[tuple[str, str]]) -> dict:
    """The default configuration's recall@20 and MRR (the figures plotted over time in the UI)."""
    model, strategy = focus(configurations)
    rows = [r for r in table.to_pylist()
            if (r["model"], r["strategy"], r["retriever"]) == (model, strategy, STRATEGY_RETRIEVER)]
    if not rows:
        return {}
    return {"configuration": f"{model} x {strategy} x {STRATEGY_RETRIEVER}",
            "recall_at_20": float(rows[0]["recall_at_20"]), "mrr": float(rows[0]["mrr"])}
