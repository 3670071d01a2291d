"""HTML, and the HTML rules every markup format ends in (Markdown, reStructuredText and Sphinx pages
are rendered to HTML first): the page's main content without its chrome, walked in document order into
headings, paragraphs, code blocks and tables by the canonical text rules of
``rag_assets.lib.ingest.canonical``.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

from rag_assets.lib.ingest.canonical import CanonicalBuilder, Extracted, fold_whitespace
from rag_assets.lib.ingest.doc_sources import SourceFile
from rag_assets.lib.ingest.extraction.base import ExtractionError, decode

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


def _text_of(node: LexborNode) -> str:
    return fold_whitespace((node.text(deep=True) or "").replace("¶", ""))


def _code_text(node: LexborNode) -> str:
    for line_break in node.css("br"):  # a highlighter that ends each line with <br> (Docusaurus' sites)
        line_break.replace_with("\n")
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
                    self.builder.add(code, code=True)
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


def extract_markup(markup: str, fallback_title: str, extra_chrome: str = "") -> Extracted:
    """Decoded HTML by the HTML rules; ``extra_chrome`` adds CSS selectors of what is not content."""
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


def extract_html(data: bytes, fallback_title: str, source: SourceFile | None = None) -> Extracted:
    """An HTML page in UTF-8 or the charset its ``<meta>`` declares (in its first 4 KiB)."""
    declared = _META_CHARSET.search(data[:4096])
    return extract_markup(decode(data, declared.group(1).decode("ascii") if declared else None), fallback_title)
