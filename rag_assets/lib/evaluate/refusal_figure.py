"""The refusal calibration as a figure: the best-distance histograms of in-domain and out-of-domain
queries (left), and the bluff, refusal and answered rates against the cut (right), the suggested cut
marked on both. ``figure`` builds it (for a test to read), ``plot`` renders it as a PNG."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rag_assets.lib.evaluate.refusal import share
from rag_assets.lib.formats.figures import png_bytes, pyplot

HISTOGRAM_RANGE = (0.2, 1.0)


def _histograms(axes, distances_in: Sequence[float], distances_out: Sequence[float], separated: dict) -> None:
    """Overlaid histograms of best distances on shared bins; values outside ``HISTOGRAM_RANGE`` fall in the edge
    bins, and nothing-returned (infinite) ones are left out."""
    bins = np.linspace(*HISTOGRAM_RANGE, 33)
    for values, label, colour in ((distances_in, "in-domain", "tab:blue"), (distances_out, "out-of-domain", "tab:red")):
        finite = [v for v in values if math.isfinite(v)]
        axes.hist(np.clip(finite, *HISTOGRAM_RANGE), bins=bins, alpha=0.5, color=colour, label=f"{label} ({len(values)})")
    if separated.get("auroc") is not None:
        axes.set_title(f"best distance; AUROC {separated['auroc']:.3f} "
                       f"[{separated['auroc_low']:.3f}, {separated['auroc_high']:.3f}]", fontsize=9)
    axes.set_xlabel("best distance (distances[0])")
    axes.set_ylabel("queries")


def _rates(axes, sweep_rows: Sequence[dict]) -> None:
    """Bluff, in-domain refusal and answered-with-needle rates against the cut."""
    cuts = [row["cut"] for row in sweep_rows]
    for label, count, denominator in (("bluff rate (out-of-domain answered)", "bluffs", "out_of_domain"),
                                      ("in-domain refused", "in_domain_refused", "in_domain"),
                                      ("answered with needle", "answered_with_needle", "in_domain")):
        axes.plot(cuts, [share(row[count], row[denominator]) for row in sweep_rows], label=label)
    axes.set_xlabel("cut (keep distance < cut)")
    axes.set_ylabel("share of queries")
    axes.set_ylim(0, 1)
    axes.set_title("the gate at each cut", fontsize=9)


def figure(sweep_rows: Sequence[dict], separated: dict, distances_in: Sequence[float],
           distances_out: Sequence[float], suggested_cut: float, title: str):
    """The matplotlib figure: best-distance histograms (left) and the rates against the cut (right), the
    suggested cut marked on both."""
    plt = pyplot()
    drawing, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    _histograms(left, distances_in, distances_out, separated)
    _rates(right, sweep_rows)
    for axes in (left, right):
        axes.axvline(suggested_cut, color="black", linestyle="--", label=f"suggested cut {suggested_cut:.3f}")
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8)
    drawing.suptitle(title)
    return drawing


def plot(sweep_rows: Sequence[dict], separated: dict, distances_in: Sequence[float],
         distances_out: Sequence[float], suggested_cut: float, title: str) -> bytes:
    """``figure`` as a PNG."""
    return png_bytes(figure(sweep_rows, separated, distances_in, distances_out, suggested_cut, title))
