"""Extraction: a document's bytes to one canonical text with its sections.

One parser per format (HTML, Markdown, reStructuredText, PDF, plain text); each follows the
canonical text rules of ``rag_assets.lib.canonical``.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import replace
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser, LexborNode

from rag_assets.lib.ingest.canonical import CanonicalBuilder, Extracted, fold_whitespace
from rag_assets.lib.ingest.doc_sources import (
    MKDOCS,
    SPHINX,
    SourceFile,
    front_matter,
    mdx_to_markdown,
    render_mkdocs,
    resolve_includes,
    tree_of,
)
from rag_assets.lib.ingest.sphinx_sources import SPHINX_CHROME, sphinx_build

EXTRACTOR_NAME = "rag_assets.extraction"
EXTRACTOR_VERSION = "2"  # 2: documentation sources read as Sphinx and MkDocs render them

_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = frozenset(
    "address article aside blockquote caption center details dialog dd div dl dt fieldset "
    "figcaption figure footer form header hgroup hr li main nav ol p section summary ul "
    "tbody thead tfoot tr td th".split()
)
# Chrome that is never content, on any site; the second group is what Sphinx adds.
_CHROME_SELECTORS = (
    "script, style, noscript, template, iframe, svg, nav, aside:not(.admonition):not(.callout), form, button, "
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


def _extract_markup(markup: str, fallback_title: str, extra_chrome: str = "") -> Extracted:
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
    chrome = _CHROME_SELECTORS + (", " + _PAGE_CHROME_SELECTORS if root.tag == "body" else "") + (
        ", " + extra_chrome if extra_chrome else "")
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


def extract_markdown(data: bytes, fallback_title: str, source: SourceFile | None = None) -> Extracted:
    """Markdown as its tree's tool renders it (``doc_sources``): a Sphinx tree's through MyST, an MkDocs
    tree's through Python-Markdown with its extensions; otherwise CommonMark (with tables) after front
    matter (its title is the title) and, for ``.mdx``, MDX's module lines; then the HTML rules. Headings
    of plain Markdown get GitHub anchors."""
    tree = tree_of(source) if source else None
    if tree and tree[0] == SPHINX:
        return _extract_sphinx_page(source, tree[1], fallback_title)
    meta, text = front_matter(_decode(data))
    if tree and tree[0] == MKDOCS:
        html, dropped = render_mkdocs(text, source, tree[1])
        extracted = _extract_markup(f"<html><body><main>{html}</main></body></html>", fallback_title)
        return replace(extracted, title=_meta_title(meta) or extracted.title, unknown_constructs=dropped)
    dropped = 0
    if source is not None:
        if source.path.lower().endswith(".mdx"):
            text = mdx_to_markdown(text)
        text, dropped = resolve_includes(text, source, [])
    extracted = _commonmark(text, fallback_title)
    return replace(extracted, title=_meta_title(meta) or extracted.title, unknown_constructs=dropped)


def _meta_title(meta: dict) -> str | None:
    title = meta.get("title")
    return fold_whitespace(str(title)) if isinstance(title, (str, int, float)) and str(title).strip() else None


def _extract_sphinx_page(source: SourceFile, tree: Path | None, fallback_title: str) -> Extracted:
    """A page of a Sphinx build of its tree (or of the corpus folder's reStructuredText without one)."""
    root = Path(source.root).resolve()
    try:
        build = sphinx_build(tree, with_markdown=True) if tree else sphinx_build(root, with_markdown=False)
    except Exception as error:  # noqa: BLE001 - Sphinx raises many types on a tree it cannot build
        raise ExtractionError(f"Sphinx could not build {tree or root}: {type(error).__name__}: {error}") from error
    page, docname = build.page((root / source.path).resolve())
    if not page.is_file():
        raise ExtractionError(f"Sphinx wrote no page for it (excluded by the tree, or unreadable): "
                              f"{_sphinx_problem(build.warnings, source.path)}")
    extracted = _extract_markup(page.read_text(encoding="utf-8"), fallback_title, SPHINX_CHROME)
    return replace(extracted, unknown_constructs=build.unknown.get(docname, 0))


def extract_sphinx_html(data: bytes, fallback_title: str) -> Extracted:
    """A page Sphinx built, by the HTML rules and without its navigation (a toctree's entries)."""
    return _extract_markup(_decode(data), fallback_title, SPHINX_CHROME)


def _sphinx_problem(warnings: str, path: str) -> str:
    own = [line for line in warnings.splitlines() if path in line]
    return own[0].strip() if own else "no warning names it"


def _commonmark(text: str, fallback_title: str) -> Extracted:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(text)
    seen: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            slug = _slug(tokens[index + 1].content)
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            token.attrSet("id", slug if count == 0 else f"{slug}-{count}")
    body = parser.renderer.render(tokens, parser.options, {})
    return _extract_markup(f"<html><body><main>{body}</main></body></html>", fallback_title)


def extract_rst(data: bytes, fallback_title: str, source: SourceFile | None = None) -> Extracted:
    """reStructuredText as Sphinx renders it (``sphinx_sources``), its tree's page or, outside a tree, the
    corpus folder's reStructuredText built as one project; without a source (a document given as bytes
    alone), docutils to HTML. Then the HTML rules; sections keep their ids."""
    if source is not None:
        tree = tree_of(source)
        return _extract_sphinx_page(source, tree[1] if tree and tree[0] == SPHINX else None, fallback_title)
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


def extract_document(data: bytes, fmt: str, fallback_title: str, source: SourceFile | None = None) -> Extracted:
    """Canonical text and sections of one document; ExtractionError with the reason if unreadable."""
    if not data.strip():
        raise ExtractionError("empty file")
    if fmt != "pdf" and b"\x00" in data[:8192]:
        raise ExtractionError("binary content (NUL bytes) in a text format")
    extractor = EXTRACTORS.get(fmt)
    if extractor is None:
        raise ExtractionError(f"unsupported format {fmt!r}")
    extracted = extractor(data, fallback_title, source) if fmt in ("rst", "markdown") else extractor(data, fallback_title)
    if not extracted.text.strip():
        raise ExtractionError("no text after extraction")
    return extracted
