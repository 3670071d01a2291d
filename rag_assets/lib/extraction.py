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
own (``Title > Section > Subsection``). A section's ``start``/``end`` delimit its own body in the
canonical text: the paragraphs after its heading and before the next heading (the heading itself
is not in the body). Text before the first heading forms a section whose path is the title.
``canonical[start:end]`` is exactly the section's body for every section.
"""

from __future__ import annotations

import hashlib
import io
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
    start: int  # the body's first character in the canonical text
    end: int  # one past the body's last character


@dataclass
class Extracted:
    title: str
    text: str
    sections: list[Section] = field(default_factory=list)


def fold_whitespace(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


class CanonicalBuilder:
    """Accumulates paragraphs and section openings; knows each paragraph's offset as it is placed."""

    def __init__(self) -> None:
        self.paragraphs: list[str] = []
        self.length = 0
        # level, name, anchor, heading text (None for a page marker), where the previous body
        # ends at the latest, where this section's body starts
        self.openings: list[tuple[int, str, str | None, str | None, int, int]] = []

    def _next_start(self) -> int:
        return self.length + (len(PARAGRAPH_SEPARATOR) if self.paragraphs else 0)

    def add(self, paragraph: str) -> tuple[int, int]:
        start = self._next_start()
        self.paragraphs.append(paragraph)
        self.length = start + len(paragraph)
        return start, self.length

    def add_heading(self, level: int, text: str, anchor: str | None) -> None:
        start, end = self.add(text)
        self.openings.append((level, text, anchor, text, start, end + len(PARAGRAPH_SEPARATOR)))

    def open_section(self, level: int, name: str, anchor: str | None) -> None:
        """A section that starts at the next paragraph without a heading in the text (a PDF page)."""
        start = self._next_start()
        self.openings.append((level, name, anchor, None, start, start))

    def build(self, page_title: str | None, file_title: str) -> Extracted:
        text = PARAGRAPH_SEPARATOR.join(self.paragraphs)
        headings = [o for o in self.openings if o[3] is not None]
        first_h1 = next((o for o in headings if o[0] == 1), None)
        title = (first_h1 and first_h1[1]) or page_title or (headings and headings[0][1]) or file_title
        sections: list[Section] = []
        first_opening = self.openings[0][4] if self.openings else len(text)
        preamble_end = _trim_end(text, 0, min(first_opening, len(text)))
        if preamble_end > 0:
            sections.append(Section(path=title, heading=None, level=0, anchor=None, start=0, end=preamble_end))
        stack: list[tuple[int, str]] = []
        for index, (level, name, anchor, heading, _, body_start) in enumerate(self.openings):
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, name))
            names = [entry for _, entry in stack]
            if names[0] != title:
                names.insert(0, title)
            following = self.openings[index + 1][4] if index + 1 < len(self.openings) else len(text)
            following = min(following, len(text))
            body_start = min(body_start, following)
            body_end = max(body_start, _trim_end(text, body_start, following))
            sections.append(
                Section(path=" > ".join(names), heading=heading, level=level, anchor=anchor,
                        start=body_start, end=body_end)
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
    def __init__(self, builder: CanonicalBuilder) -> None:
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


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def _decode(data: bytes, declared: str | None = None) -> str:
    """UTF-8 (a byte-order mark is dropped), or the encoding the document itself declares."""
    encoding = "utf-8-sig"
    if declared and declared.lower().replace("_", "-") not in ("utf-8", "utf8"):
        encoding = declared
    try:
        return data.decode(encoding)
    except LookupError as error:
        raise ExtractionError(f"unknown declared encoding {declared!r}") from error
    except UnicodeDecodeError as error:
        name = "utf-8" if encoding == "utf-8-sig" else encoding
        raise ExtractionError(f"not valid {name} text: {error}") from error


def _extract_markup(markup: str, fallback_title: str) -> Extracted:
    tree = LexborHTMLParser(markup)
    page_title = tree.css_first("title")
    title = _text_of(page_title).split(" \u2014 ")[0] if page_title else ""
    root = next((node for selector in _MAIN_SELECTORS if (node := tree.css_first(selector))), None)
    if root is None:
        raise ExtractionError("no <body> or main content in the HTML")
    chrome = _CHROME_SELECTORS + (", " + _PAGE_CHROME_SELECTORS if root.tag == "body" else "")
    for node in root.css(chrome):
        node.decompose()
    builder = CanonicalBuilder()
    walker = _HtmlWalker(builder)
    walker.walk(root)
    walker.flush()
    return builder.build(title or None, fallback_title)


def extract_html(data: bytes, fallback_title: str) -> Extracted:
    declared = _META_CHARSET.search(data[:4096])
    return _extract_markup(_decode(data, declared.group(1).decode("ascii") if declared else None), fallback_title)


def _slug(text: str) -> str:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.lower()).strip().replace(" ", "-")


def extract_markdown(data: bytes, fallback_title: str) -> Extracted:
    """CommonMark (with tables) rendered to HTML, then the HTML rules; headings get GitHub anchors."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(_decode(data))
    seen: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            slug = _slug(tokens[index + 1].content)
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            token.attrSet("id", slug if count == 0 else f"{slug}-{count}")
    body = parser.renderer.render(tokens, parser.options, {})
    return _extract_markup(f"<html><body><main>{body}</main></body></html>", fallback_title)


def extract_rst(data: bytes, fallback_title: str) -> Extracted:
    """reStructuredText rendered by docutils to HTML, then the HTML rules; sections keep their ids."""
    from docutils.core import publish_parts

    source = _decode(data)
    try:
        parts = publish_parts(
            source,
            writer="html5",
            settings_overrides={
                "report_level": 5, "halt_level": 5, "doctitle_xform": False, "input_encoding": "unicode",
                "file_insertion_enabled": False, "raw_enabled": False, "syntax_highlight": "none",
            },
        )
    except Exception as error:  # docutils raises many types on malformed input
        raise ExtractionError(f"reStructuredText could not be parsed: {error}") from error
    return _extract_markup(f"<html><body><main>{parts['html_body']}</main></body></html>", fallback_title)


def _pdf_paragraphs(page_text: str) -> list[str]:
    """A PDF page's lines to paragraphs.

    PDF text has no paragraph marks, only lines. A paragraph ends at a blank line; at a line
    clearly shorter than the page's longest (under 60 %) that ends a sentence; and at such a short
    line without a sentence end that is followed by a capitalised line (a heading).
    """
    lines = [line.rstrip() for line in page_text.replace("\r\n", "\n").split("\n")]
    longest = max((len(line) for line in lines), default=0)
    paragraphs, current = [], []

    def close() -> None:
        if current:
            paragraphs.append(fold_whitespace(" ".join(current)))
            current.clear()

    for index, line in enumerate(lines):
        if not line.strip():
            close()
            continue
        current.append(line)
        short = len(line) < 0.6 * longest
        following = lines[index + 1].lstrip() if index + 1 < len(lines) else ""
        if short and (line.endswith((".", "!", "?", ":")) or following[:1].isupper()):
            close()
    close()
    return [p for p in paragraphs if p]


def extract_pdf(data: bytes, fallback_title: str) -> Extracted:
    """Text of every page, a section per page (anchor ``page=N``) so a citation can say #page=N."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ExtractionError("encrypted PDF")
        pages = [page.extract_text() or "" for page in reader.pages]
        metadata_title = (reader.metadata.title if reader.metadata else None) or None
    except ExtractionError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as error:
        raise ExtractionError(f"corrupt PDF: {error}") from error
    builder = CanonicalBuilder()
    for number, page_text in enumerate(pages, start=1):
        builder.open_section(1, f"page {number}", f"page={number}")
        for paragraph in _pdf_paragraphs(page_text):
            builder.add(paragraph)
    return builder.build(fold_whitespace(metadata_title) if metadata_title else None, fallback_title)


def extract_plain_text(data: bytes, fallback_title: str) -> Extracted:
    """Plain text: paragraphs are runs of lines between blank lines, whitespace folded.

    A short first paragraph without a sentence end is taken as the title.
    """
    builder = CanonicalBuilder()
    for block in re.split(r"\n\s*\n", _decode(data).replace("\r\n", "\n")):
        paragraph = fold_whitespace(block)
        if paragraph:
            builder.add(paragraph)
    first = builder.paragraphs[0] if builder.paragraphs else ""
    looks_like_title = len(first) <= 80 and not first.endswith((".", "!", "?", ":"))
    return builder.build(first if looks_like_title else None, fallback_title)


EXTRACTORS = {
    "html": extract_html,
    "markdown": extract_markdown,
    "rst": extract_rst,
    "text": extract_plain_text,
    "pdf": extract_pdf,
}


def extract_document(data: bytes, fmt: str, fallback_title: str) -> Extracted:
    """Canonical text and sections of one document; ExtractionError with the reason if unreadable."""
    if not data.strip():
        raise ExtractionError("empty file")
    if fmt != "pdf" and b"\x00" in data[:8192]:
        raise ExtractionError("binary content (NUL bytes) in a text format")
    extractor = EXTRACTORS.get(fmt)
    if extractor is None:
        raise ExtractionError(f"unsupported format {fmt!r}")
    extracted = extractor(data, fallback_title)
    if not extracted.text.strip():
        raise ExtractionError("no text after extraction")
    return extracted


def _row(doc_id: str, fmt: str) -> dict:
    return {"doc_id": doc_id, "format": fmt, "title": None, "text": None, "sections": [], "status": "failed",
            "error": None, "extractor": EXTRACTOR_NAME, "extractor_version": EXTRACTOR_VERSION}


def _ok(row: dict, extracted: Extracted) -> dict:
    return row | {
        "title": extracted.title,
        "text": extracted.text,
        "sections": [
            {"path": s.path, "heading": s.heading, "level": s.level, "anchor": s.anchor, "start": s.start, "end": s.end}
            for s in extracted.sections
        ],
        "status": "ok",
    }


def _read_checked(root: Path, path: str, sha256: str, max_bytes: int) -> bytes:
    file_path = root / path
    size = file_path.stat().st_size
    if size > max_bytes:
        raise ExtractionError(f"file of {size} bytes is over the {max_bytes}-byte limit")
    data = file_path.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ExtractionError("file changed since the corpus snapshot; re-materialise corpus_snapshot")
    return data


def extract_file(root: Path, path: str, fmt: str, sha256: str, max_bytes: int) -> dict:
    """One extracted-text row for a manifest entry; a broken document gets status 'failed' and why.

    The file is re-hashed: one that changed since the snapshot fails rather than being silently
    extracted from other bytes than the snapshot recorded.
    """
    row = _row(path, fmt)
    try:
        extracted = extract_document(_read_checked(root, path, sha256, max_bytes), fmt, fallback_title=Path(path).stem)
    except (ExtractionError, OSError) as error:
        return row | {"error": str(error)}
    return _ok(row, extracted)


def extract_entry(root: Path, path: str, fmt: str, sha256: str, max_bytes: int) -> list[dict]:
    """The extracted-text rows of a manifest entry: one per document it holds (none for evaluation data)."""
    from rag_assets.lib import beir  # beir builds on this module
    from rag_assets.lib.corpus import BEIR_CORPUS, NOT_DOCUMENTS

    if fmt in NOT_DOCUMENTS:
        return []
    if fmt != BEIR_CORPUS:
        return [extract_file(root, path, fmt, sha256, max_bytes)]
    try:
        _read_checked(root, path, sha256, max_bytes)
        rows = []
        for where, record, problem in beir.iter_corpus(root / path):
            try:
                if problem:
                    raise ExtractionError(problem)
                doc_id, extracted = beir.beir_document(record, where)
            except ExtractionError as error:
                rows.append(_row(str((record or {}).get("_id", f"{path}#{where}")), fmt) | {"error": str(error)})
                continue
            rows.append(_ok(_row(doc_id, fmt), extracted))
        return rows
    except (ExtractionError, OSError, EOFError, UnicodeDecodeError) as error:
        return [_row(path, fmt) | {"error": str(error)}]


def canonical_texts(rows) -> dict[str, str]:
    """doc id -> canonical text of the documents that were extracted (failed ones have none)."""
    return {row["doc_id"]: row["text"] for row in rows if row["status"] == "ok"}


def sections_from_rows(rows: list[dict]) -> list[Section]:
    return [
        Section(path=r["path"], heading=r["heading"], level=r["level"], anchor=r["anchor"],
                start=r["start"], end=r["end"])
        for r in rows
    ]


def extraction_summary(rows: list[dict], largest: int = 5) -> dict:
    """Counts over extracted-text rows as written (never declared), and the largest documents."""
    ok = [row for row in rows if row["status"] == "ok"]
    formats: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = formats.setdefault(row["format"], {"ok": 0, "failed": 0})
        counts[row["status"]] += 1
    biggest = sorted(ok, key=lambda row: len(row["text"]), reverse=True)[:largest]
    table = ["| document | format | characters | sections |", "|---|---|---|---|"] + [
        f"| {row['doc_id']} | {row['format']} | {len(row['text'])} | {len(row['sections'])} |" for row in biggest
    ]
    return {
        "documents": len(rows),
        "ok": len(ok),
        "failed": len(rows) - len(ok),
        "failures": {row["doc_id"]: row["error"] for row in rows if row["status"] != "ok"},
        "characters": sum(len(row["text"]) for row in ok),
        "sections": sum(len(row["sections"]) for row in ok),
        "formats": formats,
        "largest_table": "\n".join(table),
    }
