"""One model x strategy partition of the refusal calibration: the threshold sweep of its stored
retrieval rows as a table, the suggested cuts, and a figure per retriever."""

from __future__ import annotations

import pyarrow as pa

from rag_assets.lib.evaluate.refusal import best_distances, calibrate
from rag_assets.lib.evaluate.refusal_figure import plot
from rag_assets.lib.store.schemas import THRESHOLD_SWEEP, table_from_rows

COLUMNS = ["query_id", "query_kind", "kind", "phrasing", "retriever", "distances", "relevant_ranks", "model",
           "revision", "strategy", "snapshot_id"]


def calibrate_partition(retrieval_runs: pa.Table) -> tuple[pa.Table, list[dict], dict[str, bytes]]:
    """(the sweep table, one suggestion per gated retriever, {retriever: PNG})."""
    rows = retrieval_runs.select(COLUMNS).to_pylist()
    stamp = {name: rows[0][name] if rows else None for name in ("model", "revision", "strategy", "snapshot_id")}
    swept, suggestions = calibrate(rows)
    figures = {}
    for suggestion in suggestions:
        retriever = suggestion["retriever"]
        inside, outside = best_distances(rows, retriever)
        figures[retriever] = plot([r for r in swept if r["retriever"] == retriever], suggestion, inside, outside,
                                  suggestion["cut"], f"{stamp['model']} x {stamp['strategy']}, {retriever}")
    table = table_from_rows(THRESHOLD_SWEEP, [stamp | row for row in swept], "refusal_calibration")
    return table, [stamp | suggestion for suggestion in suggestions], figures


def describe(suggestion: dict) -> str:
    """One suggested cut, read honestly: separation, and what the cut costs and lets through."""
    separated = "a cut separates them" if suggestion["separable"] else "no cut separates them"
    worst = suggestion["worst_in_domain"]
    best = suggestion["best_out_of_domain"]
    return (f"{suggestion['retriever']}: worst in-domain {worst:.3f} vs best out-of-domain {best:.3f} ({separated}); "
            f"AUROC {suggestion['auroc']:.3f} [{suggestion['auroc_low']:.3f}, {suggestion['auroc_high']:.3f}]; "
            f"suggested cut {suggestion['cut']:.3f}: {suggestion['answered_with_needle']} of "
            f"{suggestion['in_domain']} in-domain answered with their needle "
            f"[{suggestion['answered_low']:.2f}, {suggestion['answered_high']:.2f}], {suggestion['in_domain_refused']} "
            f"refused; {suggestion['bluffs']} of {suggestion['out_of_domain']} out-of-domain bluffs "
            f"[{suggestion['bluff_low']:.2f}, {suggestion['bluff_high']:.2f}] "
            f"({suggestion['bluffs_near']} near, {suggestion['bluffs_off_topic']} off-topic)"
            if worst is not None and best is not None and suggestion["auroc"] is not None else
            f"{suggestion['retriever']}: nothing to calibrate (no in-domain needle found or no out-of-domain query)")
