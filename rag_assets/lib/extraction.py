"""Extraction: a document's bytes to one canonical text with its sections.

Canonical text rules (every strategy, needle and offset downstream depends on them):

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
own (``Title > Section > Subsection``). A section's ``from``/``to`` delimit its own body in the
canonical text: the paragraphs after its heading and before the next heading (the heading itself
is not in the body). Text before the first heading forms a section whose path is the title.
``canonical[from:to]`` is exactly the section's body for every section.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser, LexborNode

EXTRACTOR_NAME = "rag_assets.extraction"
EXTRACTOR_VERSION = "1"
PARAGRAPH_SEPARATOR = "\n\n"

_WHITESPACE = re.compile(r"\s+")
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = frozenset(
    "address article aside blockquote caption center details dialog dd div dl dt fieldset "
    "figcaption figure footer form header hgroup hr li main nav ol p section summary ul "
    "tbody thead tfoot tr td th".split()
)
# Chrome that is never content, on any site; the second group is what Sphinx adds.
_CHROME_SELECTORS = (
    "script, style, noscript, template, iframe, svg, nav, aside, form, button, "
    "[role=navigation], [role=search], [role=banner], [role=contentinfo], [hidden], "
    "a.headerlink, div.sphinxsidebar, div.related, div.footer, #searchbox, .inline-search"
)
# A page's own header and footer are chrome when the content is the whole body; inside an
# <article> or <main> they carry the title and must stay.
_PAGE_CHROME_SELECTORS = "body > header, body > footer"
_MAIN_SELECTORS = ("[role=main]", "main", "article", "div.body", "body")


class ExtractionError(ValueError):
    """The document cannot be read; the message is the reason recorded for it."""


@dataclass(frozen=True)
class Section:
    path: str
    heading: str | None  # the heading that opens the section; None for text before the first
    level: int  # 0 for text before the first heading, else the heading level
    anchor: str | None  # HTML id to cite as page.html#anchor
    start: int  # "from": the body's first character in the canonical text
    end: int  # "to": one past the body's last character


@dataclass
class Extracted:
    title: str
    text: str
    sections: list[Section] = field(default_factory=list)


def fold_whitespace(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


class _CanonicalBuilder:
    """Accumulates paragraphs and headings; knows each paragraph's offset as it is placed."""

    def __init__(self) -> None:
        self.paragraphs: list[str] = []
        self.length = 0
        self.headings: list[tuple[int, str, str | None, int, int]] = []  # level, text, anchor, start, end

    def add(self, paragraph: str) -> tuple[int, int]:
        if self.paragraphs:
            self.length += len(PARAGRAPH_SEPARATOR)
        start = self.length
        self.paragraphs.append(paragraph)
        self.length += len(paragraph)
        return start, self.length

    def add_heading(self, level: int, text: str, anchor: str | None) -> None:
        start, end = self.add(text)
        self.headings.append((level, text, anchor, start, end))

    def build(self, fallback_title: str) -> Extracted:
        text = PARAGRAPH_SEPARATOR.join(self.paragraphs)
        first_h1 = next((h for h in self.headings if h[0] == 1), None)
        title = first_h1[1] if first_h1 else fallback_title
        sections: list[Section] = []
        first_heading_start = self.headings[0][3] if self.headings else len(text)
        preamble_end = _trim_end(text, 0, first_heading_start)
        if preamble_end > 0:
            sections.append(Section(path=title, heading=None, level=0, anchor=None, start=0, end=preamble_end))
        stack: list[tuple[int, str]] = []
        for index, (level, heading, anchor, _, heading_end) in enumerate(self.headings):
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
            names = [name for _, name in stack]
            if names[0] != title:
                names.insert(0, title)
            next_start = self.headings[index + 1][3] if index + 1 < len(self.headings) else len(text)
            body_start = min(heading_end + len(PARAGRAPH_SEPARATOR), next_start)
            body_end = max(body_start, _trim_end(text, body_start, next_start))
            sections.append(
                Section(path=" > ".join(names), heading=heading, level=level, anchor=anchor, start=body_start, end=body_end)
            )
        return Extracted(title=title, text=text, sections=sections)


def _trim_end(text: str, start: int, end: int) -> int:
    """``end`` moved back over the separator (whitespace) that precedes the next heading."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _text_of(node: LexborNode) -> str:
    return fold_whitespace((node.text(deep=True) or "").replace("¶", ""))


def _code_text(node: LexborNode) -> str:
    lines = [line.rstrip() for line in (node.text(deep=True) or "").replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def _table_text(node: LexborNode) -> str:
    rows = []
    for row in node.css("tr"):
        cells = [_text_of(cell) for cell in row.iter() if cell.tag in ("td", "th")]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def _anchor_of(heading: LexborNode) -> str | None:
    if heading.attributes.get("id"):
        return heading.attributes["id"]
    parent = heading.parent
    if parent is not None and parent.tag == "section" and parent.attributes.get("id"):
        return parent.attributes["id"]
    return None


class _HtmlWalker:
    def __init__(self, builder: _CanonicalBuilder) -> None:
        self.builder = builder
        self.inline: list[str] = []

    def flush(self) -> None:
        paragraph = fold_whitespace("".join(self.inline))
        self.inline.clear()
        if paragraph:
            self.builder.add(paragraph)

    def walk(self, node: LexborNode) -> None:
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag == "-text":
                self.inline.append((child.text_content or "").replace("¶", ""))
            elif tag in _HEADINGS:
                self.flush()
                heading = _text_of(child)
                if heading:
                    self.builder.add_heading(_HEADINGS[tag], heading, _anchor_of(child))
            elif tag == "pre":
                self.flush()
                code = _code_text(child)
                if code.strip():
                    self.builder.add(code)
            elif tag == "table":
                self.flush()
                table = _table_text(child)
                if table:
                    self.builder.add(table)
            elif tag == "br":
                self.inline.append(" ")
            elif tag in _BLOCKS:
                self.flush()
                self.walk(child)
                self.flush()
            elif tag.startswith("-") or tag.startswith("!"):
                continue  # comments, doctype
            else:
                self.walk(child)  # inline element


def extract_html(data: bytes, fallback_title: str) -> Extracted:
    try:
        markup = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExtractionError(f"not UTF-8 text: {error}") from error
    tree = LexborHTMLParser(markup)
    page_title = tree.css_first("title")
    title = _text_of(page_title).split(" \u2014 ")[0] if page_title else ""
    root = next((node for selector in _MAIN_SELECTORS if (node := tree.css_first(selector))), None)
    if root is None:
        raise ExtractionError("no <body> or main content in the HTML")
    chrome = _CHROME_SELECTORS + (", " + _PAGE_CHROME_SELECTORS if root.tag == "body" else "")
    for node in root.css(chrome):
        node.decompose()
    builder = _CanonicalBuilder()
    walker = _HtmlWalker(builder)
    walker.walk(root)
    walker.flush()
    return builder.build(title or fallback_title)


def extract_plain_text(data: bytes, fallback_title: str) -> Extracted:
    """Plain text: paragraphs are runs of lines between blank lines, whitespace folded."""
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ExtractionError(f"not UTF-8 text: {error}") from error
    builder = _CanonicalBuilder()
    for block in re.split(r"\n\s*\n", raw.replace("\r\n", "\n")):
        paragraph = fold_whitespace(block)
        if paragraph:
            builder.add(paragraph)
    return builder.build(fallback_title)


EXTRACTORS = {"html": extract_html, "text": extract_plain_text}


def extract_document(data: bytes, fmt: str, fallback_title: str) -> Extracted:
    """Canonical text and sections of one document; ExtractionError with the reason if unreadable."""
    if not data.strip():
        raise ExtractionError("empty file")
    if b"\x00" in data[:8192] and fmt != "pdf":
        raise ExtractionError("binary content (NUL bytes) in a text format")
    extractor = EXTRACTORS.get(fmt)
    if extractor is None:
        raise ExtractionError(f"unsupported format {fmt!r}")
    extracted = extractor(data, fallback_title)
    if not extracted.text.strip():
        raise ExtractionError("no text after extraction")
    return extracted


def extract_file(root: Path, path: str, fmt: str, sha256: str, max_bytes: int) -> dict:
    """One extracted-text row for a manifest entry; a broken document gets status 'failed' and why.

    The file is re-hashed: one that changed since the snapshot fails rather than being silently
    extracted from other bytes than the snapshot recorded.
    """
    row = {"doc_id": path, "format": fmt, "title": None, "text": None, "sections": [],
           "status": "failed", "error": None,
           "extractor": EXTRACTOR_NAME, "extractor_version": EXTRACTOR_VERSION}
    try:
        file_path = root / path
        if file_path.stat().st_size > max_bytes:
            raise ExtractionError(f"file of {file_path.stat().st_size} bytes is over the {max_bytes}-byte limit")
        data = file_path.read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ExtractionError("file changed since the corpus snapshot; re-materialise corpus_snapshot")
        extracted = extract_document(data, fmt, fallback_title=Path(path).stem)
    except (ExtractionError, OSError) as error:
        row["error"] = str(error)
        return row
    row.update(
        title=extracted.title,
        text=extracted.text,
        sections=[
            {"path": s.path, "heading": s.heading, "level": s.level, "anchor": s.anchor,
             "from": s.start, "to": s.end}
            for s in extracted.sections
        ],
        status="ok",
    )
    return row


def sections_from_rows(rows: list[dict]) -> list[Section]:
    return [
        Section(path=r["path"], heading=r["heading"], level=r["level"], anchor=r["anchor"],
                start=r["from"], end=r["to"])
        for r in rows
    ]
