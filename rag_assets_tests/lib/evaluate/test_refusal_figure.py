"""The refusal figure shows what the sweep counted: the best distances on shared bins, the three rates
against the cut, the suggested cut on both panels."""

import numpy as np
import pytest

from rag_assets.lib.evaluate.refusal import best_distances, calibrate, separation
from rag_assets.lib.evaluate.refusal_figure import HISTOGRAM_RANGE, figure, plot
from rag_assets_tests.lib.evaluate.test_refusal import late_rows


@pytest.fixture
def drawn():
    rows = late_rows()
    swept, suggestions = calibrate(rows)
    inside, outside = best_distances(rows, "late_interaction")
    inside = inside + [float("inf")]  # a query that returned nothing: counted, never drawn
    drawing = figure(swept, separation(rows)["late_interaction"], inside, outside, suggestions[0]["cut"], "m x s")
    yield drawing, swept, suggestions[0], inside, outside
    drawing.clf()


def test_the_histograms_count_the_best_distances_on_shared_bins(drawn):
    drawing, _, suggestion, inside, outside = drawn
    left = drawing.axes[0]
    bins = np.linspace(*HISTOGRAM_RANGE, 33)
    bars = left.patches
    assert len(bars) == 2 * 32  # two histograms of 32 bins each
    heights_in = [bar.get_height() for bar in bars[:32]]
    assert heights_in == list(np.histogram([d for d in inside if np.isfinite(d)], bins=bins)[0])
    assert [bar.get_height() for bar in bars[32:]] == list(np.histogram(outside, bins=bins)[0])
    legend = [text.get_text() for text in left.get_legend().get_texts()]
    assert legend == ["in-domain (4)", "out-of-domain (3)", f"suggested cut {suggestion['cut']:.3f}"]
    assert left.get_title().startswith("best distance; AUROC 1.000 [1.000, 1.000]")
    assert (left.get_xlabel(), left.get_ylabel()) == ("best distance (distances[0])", "queries")


def test_the_rates_and_the_cut(drawn):
    drawing, swept, suggestion, _, _ = drawn
    right = drawing.axes[1]
    rows = [row for row in swept if row["retriever"] == "late_interaction"]
    lines = {line.get_label(): line for line in right.get_lines()}
    assert list(lines["bluff rate (out-of-domain answered)"].get_ydata()) == [r["bluffs"] / r["out_of_domain"] for r in rows]
    assert list(lines["in-domain refused"].get_ydata()) == [r["in_domain_refused"] / r["in_domain"] for r in rows]
    assert list(lines["answered with needle"].get_ydata()) == [r["answered_with_needle"] / r["in_domain"] for r in rows]
    assert list(lines["answered with needle"].get_xdata()) == [r["cut"] for r in rows]
    for axes in drawing.axes:
        marked = [line for line in axes.get_lines() if line.get_label().startswith("suggested cut")]
        assert [list(line.get_xdata()) for line in marked] == [[suggestion["cut"]] * 2]
    assert right.get_ylim() == (0.0, 1.0) and right.get_title() == "the gate at each cut"
    assert drawing.get_suptitle() == "m x s"


def test_the_png_is_the_figure():
    rows = late_rows()
    swept, suggestions = calibrate(rows)
    inside, outside = best_distances(rows, "late_interaction")
    png = plot(swept, separation(rows)["late_interaction"], inside, outside, suggestions[0]["cut"], "m x s")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
