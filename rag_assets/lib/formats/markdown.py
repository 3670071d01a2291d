"""Markdown that is safe to render when it quotes the corpus, and the one table formatter.

Corpus text is data, never markup: ``escape_markdown`` turns what a document says into text that a
Markdown renderer shows as written (no live HTML, no table break from a ``|``, no link or image).
"""

from __future__ import annotations

import html
import re
from typing import Any, Callable, Iterable, Sequence

EXCERPT = 160  # characters of a chunk or needle shown in a preview


def escape_markdown(text: object) -> str:
    """``text`` as literal Markdown: HTML escaped, table pipes and Markdown punctuation backslashed,
    newlines folded to spaces (one table cell)."""
    escaped = html.escape(" ".join(str(text).split()), quote=False)
    return re.sub(r"([\\`*_{}\[\]()#+!|~>])", r"\\\1", escaped)


def excerpt(text: str | None, limit: int = EXCERPT) -> str:
    folded = " ".join((text or "").split())
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def markdown_table(columns: Sequence[tuple[str, Callable[[Any], object]]], rows: Iterable[Any]) -> str:
    """A Markdown table: one column per (header, cell of a row), one line per row. Every table rag_assets
    prints or renders goes through here; a cell that quotes the corpus is escaped by its column."""
    lines = ["| " + " | ".join(header for header, _ in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(cell(row)) for _, cell in columns) + " |" for row in rows]
    return "\n".join(lines)


def with_interval(value: float, low: float, high: float, digits: int = 3) -> str:
    """A figure and its interval: ``0.529 [0.45, 0.60]``."""
    return f"{value:.{digits}f} [{low:.2f}, {high:.2f}]"
