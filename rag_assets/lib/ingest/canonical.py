"""Canonical text: the one text per document that every strategy, needle and offset depends on.

Canonical text rules:

- Block elements (paragraphs, list items, definition terms and descriptions, quotes, table rows
  of a table, headings, code blocks) become paragraphs separated by exactly one blank line
  (``"\\n\\n"``). A paragraph never contains a blank line, except inside a code block.
- Whitespace inside a paragraph is folded to single spaces and trimmed, so source line wrapping
  never survives.
- Code blocks (``<pre>``) keep their lines and indentation; only trailing spaces of each line and
  leading/trailing blank lines are removed.
- A table becomes one paragraph with a line per row and the row's cells separated by ``" | "``.
- A heading stays a paragraph of its own; it opens a section.
- HTML navigation, headers, footers, sidebars, search boxes, "¶" permalinks, scripts and styles
  never appear.

Sections: every heading opens a section whose ``path`` is the chain of headings above it and its
own (``Title > Section > Subsection``). A section's ``start``/``end`` delimit its own body in the
canonical text: the paragraphs after its heading and before the next heading (the heading itself
is not in the body). Text before the first heading forms a section whose path is the title.
``canonical[start:end]`` is exactly the section's body for every section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

PARAGRAPH_SEPARATOR = "\n\n"

_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Section:
    path: str
    heading: str | None  # the heading that opens the section; None for text before the first
    level: int  # 0 for text before the first heading, else the heading level
    anchor: str | None  # HTML id to cite as page.html#anchor
    start: int  # the body's first character in the canonical text
    end: int  # one past the body's last character


@dataclass
class Extracted:
    title: str
    text: str
    sections: list[Section] = field(default_factory=list)
    unknown_constructs: int = 0  # directives and roles nobody registered (kept), include markers dropped
    from_code: int = 0  # directives whose text is generated from the documented code (autodoc), left without text
    code_spans: tuple[tuple[int, int], ...] = ()  # (start, end) of each code block in ``text``


def fold_whitespace(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


class Opening(NamedTuple):
    """Where a section opens, as the builder records it."""

    level: int
    name: str
    anchor: str | None
    heading: str | None  # the heading text; None for a page marker
    previous_end: int  # where the previous body ends at the latest
    body_start: int  # where this section's body starts


class CanonicalBuilder:
    """Accumulates paragraphs and section openings; knows each paragraph's offset as it is placed."""

    def __init__(self) -> None:
        self.paragraphs: list[str] = []
        self.length = 0
        self.openings: list[Opening] = []
        self.code: list[tuple[int, int]] = []  # where the code blocks are

    def _next_start(self) -> int:
        return self.length + (len(PARAGRAPH_SEPARATOR) if self.paragraphs else 0)

    def add(self, paragraph: str, code: bool = False) -> tuple[int, int]:
        start = self._next_start()
        self.paragraphs.append(paragraph)
        self.length = start + len(paragraph)
        if code:
            self.code.append((start, self.length))
        return start, self.length

    def add_heading(self, level: int, text: str, anchor: str | None) -> None:
        start, end = self.add(text)
        self.openings.append(Opening(level=level, name=text, anchor=anchor, heading=text, previous_end=start,
                                     body_start=end + len(PARAGRAPH_SEPARATOR)))

    def open_section(self, level: int, name: str, anchor: str | None) -> None:
        """A section that starts at the next paragraph without a heading in the text (a PDF page)."""
        start = self._next_start()
        self.openings.append(Opening(level=level, name=name, anchor=anchor, heading=None, previous_end=start,
                                     body_start=start))

    def build(self, page_title: str | None, file_title: str) -> Extracted:
        text = PARAGRAPH_SEPARATOR.join(self.paragraphs)
        headings = [o for o in self.openings if o.heading is not None]
        first_h1 = next((o for o in headings if o.level == 1), None)
        title = (first_h1 and first_h1.name) or page_title or (headings and headings[0].name) or file_title
        sections: list[Section] = []
        first_opening = self.openings[0].previous_end if self.openings else len(text)
        preamble_end = _trim_end(text, 0, min(first_opening, len(text)))
        if preamble_end > 0:
            sections.append(Section(path=title, heading=None, level=0, anchor=None, start=0, end=preamble_end))
        stack: list[tuple[int, str]] = []
        for index, opening in enumerate(self.openings):
            while stack and stack[-1][0] >= opening.level:
                stack.pop()
            stack.append((opening.level, opening.name))
            names = [entry for _, entry in stack]
            if names[0] != title:
                names.insert(0, title)
            following = self.openings[index + 1].previous_end if index + 1 < len(self.openings) else len(text)
            following = min(following, len(text))
            body_start = min(opening.body_start, following)
            body_end = max(body_start, _trim_end(text, body_start, following))
            sections.append(
                Section(path=" > ".join(names), heading=opening.heading, level=opening.level, anchor=opening.anchor,
                        start=body_start, end=body_end)
            )
        return Extracted(title=title, text=text, sections=sections, code_spans=tuple(self.code))


def _trim_end(text: str, start: int, end: int) -> int:
    """``end`` moved back over the separator (whitespace) that precedes the next heading."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end
