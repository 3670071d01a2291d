"""The verdict an evaluation ends with: what won, what is significant, when to refuse, what changed,
and where the rest is; at most about 30 lines (``rag-assets report`` keeps the full tables)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from rag_assets.lib.evaluate.measures import comparison, suggested_cuts
from rag_assets.lib.evaluate.regressions import latest_regressions

MAX_FINDINGS = 8  # significant paired findings shown; the rest are in `rag-assets report --paired`


def _interval(row: dict, name: str) -> str:
    return f"{row[name]:.3f} [{row[name + '_low']:.2f}, {row[name + '_high']:.2f}]"


def best_by_model(connection: duckdb.DuckDBPyConnection) -> list[dict]:
    """Per model (an external retriever is one), the configuration with the highest MRR (ties: S@20)."""
    rows = comparison(connection, ("model", "strategy", "retriever")).to_pylist()
    best: dict[str, dict] = {}
    for row in rows:
        kept = best.get(row["model"])
        if kept is None or (row["mrr"], row["success_at_20"]) > (kept["mrr"], kept["success_at_20"]):
            best[row["model"]] = row
    return [best[model] for model in sorted(best)]


def findings(connection: duckdb.DuckDBPyConnection, alpha: float = 0.05) -> list[str]:
    """The paired comparisons that are significant, in words."""
    rows = connection.sql(f"SELECT * FROM comparisons WHERE p_value < {alpha} ORDER BY p_value, model, comparison"
                          ).to_arrow_table().to_pylist()
    said = []
    for row in rows:
        a = (f"{row['a_strategy']} x {row['a_retriever']}", row["a_value"], row["wins"])
        b = (f"{row['b_strategy']} x {row['b_retriever']}", row["b_value"], row["losses"])
        better, worse = (a, b) if row["a_value"] > row["b_value"] else (b, a)
        said.append(f"{row['model']}: {better[0]} beats {worse[0]} on {row['measure'].replace('_at_', '@')} "
                    f"({better[1]:.3f} vs {worse[1]:.3f}; better on {better[2]} queries, worse on {worse[2]}, "
                    f"p = {row['p_value']:.2g}; {row['queries']} queries)")
    return said


def refusal(connection: duckdb.DuckDBPyConnection, model: str, strategy: str) -> list[str]:
    cuts = suggested_cuts(connection)
    if cuts is None:
        return []
    rows = [r for r in cuts.to_pylist() if r["model"] == model and r["strategy"] == strategy and r["cut"] is not None]
    return [f"{model} x {strategy} x {r['retriever']}: refuse above distance {r['cut']:.3f}: "
            f"{r['answered_with_needle']} of {r['in_domain']} answered with their needle, {r['bluffs']} of "
            f"{r['out_of_domain']} out-of-domain bluffs"
            + (f" (AUROC {r['auroc']:.2f})" if r["auroc"] is not None else " (no out-of-domain questions: not calibrated)")
            for r in rows[:1]]


def verdict(connection: duckdb.DuckDBPyConnection, home: Path) -> str:
    """The few lines a person reads first after an evaluation."""
    lines = ["Verdict (best configuration of each model by MRR, with 95% intervals):"]
    best = best_by_model(connection)
    for row in best:
        lines.append(f"  {row['model']}: {row['strategy']} x {row['retriever']}: MRR {_interval(row, 'mrr')}, "
                     f"S@20 {_interval(row, 'success_at_20')} ({row['queries']} queries)")
    significant = findings(connection)
    lines.append(f"Significant paired findings (p < 0.05): {len(significant) or 'none'}")
    lines += [f"  {finding}" for finding in significant[:MAX_FINDINGS]]
    if len(significant) > MAX_FINDINGS:
        lines.append(f"  ... {len(significant) - MAX_FINDINGS} more: rag-assets report --paired")
    overall = max(best, key=lambda r: (r["mrr"], r["success_at_20"]), default=None)
    gate = refusal(connection, overall["model"], overall["strategy"]) if overall else []
    if gate:
        lines += ["When to refuse:", *(f"  {line}" for line in gate)]
    lines.append(f"Since the previous run: {latest_regressions(connection).summary().splitlines()[0]}")
    lines += [f"Full tables: rag-assets report (--paired); report {home / 'report' / 'report.md'}; "
              f"DuckDB {home / 'metrics.duckdb'}; UI: rag-assets ui"]
    return "\n".join(lines)
