"""The comparison report: plots and a Markdown file people can look at.

Two figures: recall@k curves per chunking strategy (one model, dense retrieval) with Wilson 95 %
interval bars, and per-retriever bars (recall@1, recall@4, MRR with their intervals) for one model
and strategy. The Markdown report holds the main table, the paired comparisons, the strategies'
costs and both figures (as files beside it).
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pyarrow as pa

from rag_assets.lib.metrics import K_VALUES


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    _figure().close(figure)
    return buffer.getvalue()


def recall_curves(table: pa.Table, model: str, retriever: str = "dense") -> bytes:
    """recall@k against k, one line per strategy, with interval bars. ``table``: a comparison by
    model, strategy and retriever."""
    plt = _figure()
    figure, axes = plt.subplots(figsize=(7, 4.2))
    rows = [r for r in table.to_pylist() if r["model"] == model and r["retriever"] == retriever]
    for offset, row in enumerate(sorted(rows, key=lambda r: r["strategy"])):
        ks = [k * (1 + 0.015 * (offset - len(rows) / 2)) for k in K_VALUES]  # nudge to keep bars apart
        values = [row[f"recall_at_{k}"] for k in K_VALUES]
        low = [v - row[f"recall_at_{k}_low"] for v, k in zip(values, K_VALUES)]
        high = [row[f"recall_at_{k}_high"] - v for v, k in zip(values, K_VALUES)]
        axes.errorbar(ks, values, yerr=[low, high], marker="o", capsize=3, label=row["strategy"])
    axes.set_xscale("log")
    axes.set_xticks(list(K_VALUES), [str(k) for k in K_VALUES])
    axes.set_xlabel("k")
    axes.set_ylabel("recall@k (success@k)")
    axes.set_ylim(0, 1)
    axes.set_title(f"{model}, {retriever}: recall@k with Wilson 95 % intervals")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    return _png(figure)


def retriever_bars(table: pa.Table, model: str, strategy: str) -> bytes:
    plt = _figure()
    rows = sorted((r for r in table.to_pylist() if r["model"] == model and r["strategy"] == strategy),
                  key=lambda r: r["retriever"])
    measures = [("recall_at_1", "R@1"), ("recall_at_4", "R@4"), ("mrr", "MRR")]
    figure, axes = plt.subplots(figsize=(7, 4.2))
    width = 0.8 / max(len(rows), 1)
    for index, row in enumerate(rows):
        positions = [m + index * width for m in range(len(measures))]
        values = [row[m] for m, _ in measures]
        errors = [[v - row[f"{m}_low"] for v, (m, _) in zip(values, measures)],
                  [row[f"{m}_high"] - v for v, (m, _) in zip(values, measures)]]
        axes.bar(positions, values, width, yerr=errors, capsize=3, label=row["retriever"])
    axes.set_xticks([m + width * (len(rows) - 1) / 2 for m in range(len(measures))], [label for _, label in measures])
    axes.set_ylim(0, 1)
    axes.set_title(f"{model}, {strategy}: retrievers with 95 % intervals")
    axes.grid(axis="y", alpha=0.3)
    axes.legend(fontsize=8)
    return _png(figure)


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
