"""Extraction: a document's bytes to one canonical text with its sections.

One parser per format (HTML, Markdown, reStructuredText, PDF, plain text); each follows the
canonical text rules of ``rag_assets.lib.canonical``.
"""

from __future__ import annotations

import io
import logging
import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

from rag_assets.lib.ingest.canonical import CanonicalBuilder, Extracted, fold_whitespace

EXTRACTOR_NAME = "rag_assets.extraction"
EXTRACTOR_VERSION = "1"

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
        """The node's content in document order, with an explicit stack: any nesting depth (a page of
        100,000 nested elements) walks in linear time without recursion."""
        levels = [(node.iter(include_text=True), False)]  # (children left, whether leaving ends a block)
        while levels:
            child = next(levels[-1][0], None)
            if child is None:
                _, block = levels.pop()
                if block:
                    self.flush()
                continue
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
                levels.append((child.iter(include_text=True), True))
            elif tag.startswith("-") or tag.startswith("!"):
                continue  # comments, doctype
            else:
                levels.append((child.iter(include_text=True), False))  # inline element


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


MAX_NESTING = 5_000  # elements open at once; an HTML tree builder's time grows with depth squared
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)[^>]*?(/?)>")
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
# elements whose end tag may be left out: the parser closes them by itself, so they never stack up
_IMPLIED_END = frozenset("html head body p li dt dd option optgroup tr td th thead tbody tfoot colgroup caption "
                         "rb rt rtc rp".split())


def nesting_depth(markup: str, limit: int = MAX_NESTING) -> int:
    """How many elements are open at once at most (counted from the tags, in one linear pass; an
    unclosed element counts as open), up to ``limit + 1``."""
    depth = deepest = 0
    for closing, name, self_closing in _TAG.findall(markup):
        if closing:
            if name.lower() not in _IMPLIED_END:
                depth = max(0, depth - 1)
        elif not self_closing and name.lower() not in _VOID and name.lower() not in _IMPLIED_END:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
    return deepest


def _extract_markup(markup: str, fallback_title: str) -> Extracted:
    depth = nesting_depth(markup)
    if depth > MAX_NESTING:
        raise ExtractionError(f"HTML nests elements more than {MAX_NESTING:,} deep: not extracted (an HTML parser "
                              f"takes time growing with the square of the depth; no real page nests so deep)")
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

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its repair notes are not failures; a failure is recorded
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
