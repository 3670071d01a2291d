"""Matplotlib without a display: a figure module and PNG bytes, for the report and the refusal plots."""

from __future__ import annotations

import io


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png_bytes(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    pyplot().close(figure)
    return buffer.getvalue()
