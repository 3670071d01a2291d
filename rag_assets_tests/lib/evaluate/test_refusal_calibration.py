"""One model x strategy partition of the refusal calibration: the sweep stamped with its build, one
suggestion per retriever with a distance scale, and a figure each."""

import pyarrow as pa
import pytest

from rag_assets.lib.evaluate.refusal import CUTS
from rag_assets.lib.evaluate.refusal_calibration import COLUMNS, calibrate_partition, describe
from rag_assets.lib.store.schemas import THRESHOLD_SWEEP

STAMP = {"model": "m", "revision": "r1", "strategy": "boundaries", "snapshot_id": "snap"}


def _row(query_id, kind, retriever, distances, ranks, query_kind="needle"):
    return {"query_id": query_id, "query_kind": query_kind, "kind": kind, "phrasing": "doc", "retriever": retriever,
            "distances": distances, "relevant_ranks": ranks, **STAMP}


def _runs():
    rows = [
        # in-domain: needles at the top at 0.20 and 0.30; out-of-domain best at 0.60 and 0.70
        _row("n1", "prose", "dense", [0.20, 0.5], [1]), _row("n2", "prose", "dense", [0.30, 0.5], [1]),
        _row("o1", "near", "dense", [0.60], [], "out_of_domain"),
        _row("o2", "off_topic", "dense", [0.70], [], "out_of_domain"),
        # bm25 has no distance scale: not calibrated
        _row("n1", "prose", "bm25", None, [1]),
    ]
    return pa.Table.from_pylist(rows).select(COLUMNS)


def test_the_sweep_is_stamped_and_the_suggestion_separates_a_separable_partition():
    table, suggestions, figures = calibrate_partition(_runs())
    assert table.schema == THRESHOLD_SWEEP
    assert table.num_rows == len(CUTS)  # one retriever with a distance scale, every cut
    assert set(table.column("model").to_pylist()) == {"m"} and set(table.column("revision").to_pylist()) == {"r1"}
    [suggestion] = suggestions
    assert suggestion["retriever"] == "dense" and suggestion | STAMP == suggestion
    # the smallest cut that answers both needles (0.30 < cut) lets no out-of-domain query through
    assert suggestion["cut"] == pytest.approx(0.305)
    assert (suggestion["answered_with_needle"], suggestion["bluffs"], suggestion["separable"]) == (2, 0, True)
    assert suggestion["auroc"] == 1.0
    assert sum(table.column("suggested").to_pylist()) == 1
    assert list(figures) == ["dense"] and figures["dense"].startswith(b"\x89PNG")
    text = describe(suggestion)
    assert "dense: worst in-domain 0.300 vs best out-of-domain 0.600 (a cut separates them)" in text
    assert "suggested cut 0.305: 2 of 2 in-domain answered with their needle" in text


def test_nothing_to_calibrate_is_said_plainly():
    only_in_domain = pa.Table.from_pylist([_row("n1", "prose", "dense", [0.2], [1])]).select(COLUMNS)
    _, [suggestion], _ = calibrate_partition(only_in_domain)
    assert describe(suggestion) == ("dense: nothing to calibrate (no in-domain needle found or no out-of-domain "
                                    "query)")
