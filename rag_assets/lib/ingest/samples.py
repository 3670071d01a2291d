"""A few chunks of a strategy for a person to look at (the `chunks` asset's preview table in the UI)."""

from __future__ import annotations

from rag_assets.lib.formats.markdown import excerpt


def sample_chunks(rows: list[dict], count: int = 6) -> list[dict]:
    """``count`` chunks spread evenly over the rows (first, last and between), with their section,
    offsets and an excerpt of their content."""
    if not rows:
        return []
    step = max(1, (len(rows) - 1) / max(1, count - 1))
    picked = sorted({min(len(rows) - 1, round(i * step)) for i in range(count)})
    return [{"chunk_id": rows[i]["chunk_id"], "section": rows[i]["section"] or "", "start": rows[i]["start"],
             "end": rows[i]["end"], "content": excerpt(rows[i]["content"])} for i in picked]
