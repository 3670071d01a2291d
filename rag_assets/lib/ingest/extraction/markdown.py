"""Markdown (``.md``, ``.markdown``, ``.mdx``) as its tree's tool renders it, then the HTML rules."""

from __future__ import annotations

import re
from dataclasses import replace

from rag_assets.lib.ingest.canonical import Extracted, fold_whitespace
from rag_assets.lib.ingest.doc_sources import (
    DOCUSAURUS,
    MKDOCS,
    SPHINX,
    SourceFile,
    front_matter,
    mdx_to_markdown,
    render_mkdocs,
    resolve_includes,
    tree_of,
)
from rag_assets.lib.ingest.extraction.base import decode
from rag_assets.lib.ingest.extraction.html import extract_markup
from rag_assets.lib.ingest.extraction.sphinx_pages import extract_sphinx_page


def _slug(text: str) -> str:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.lower()).strip().replace(" ", "-")


def extract_markdown(data: bytes, fallback_title: str, source: SourceFile | None = None) -> Extracted:
    """Markdown as its tree's tool renders it (``doc_sources``): a Sphinx tree's through MyST, an MkDocs
    tree's through Python-Markdown with its extensions; otherwise CommonMark (with tables) after front
    matter (its title is the title) and, for ``.mdx`` and every page of a Docusaurus tree, as MDX
    (``mdx_to_markdown``); then the HTML rules. Headings
    of plain Markdown get GitHub anchors."""
    tree = tree_of(source) if source else None
    if tree and tree.tool == SPHINX:
        return extract_sphinx_page(source, tree.folder, fallback_title, tree.config)
    meta, text = front_matter(decode(data))
    if tree and tree.tool == MKDOCS:
        html, dropped, from_code = render_mkdocs(text, source, tree.folder)
        extracted = extract_markup(f"<html><body><main>{html}</main></body></html>", fallback_title)
        return replace(extracted, title=_meta_title(meta) or extracted.title, unknown_constructs=dropped,
                       from_code=from_code)
    dropped = 0
    if source is not None:
        if source.path.lower().endswith(".mdx") or (tree and tree.tool == DOCUSAURUS):
            text = mdx_to_markdown(text)  # a Docusaurus tree's .md pages are MDX to Docusaurus
        text, dropped = resolve_includes(text, source, [])
    extracted = _commonmark(text, fallback_title)
    return replace(extracted, title=_meta_title(meta) or extracted.title, unknown_constructs=dropped)


def _meta_title(meta: dict) -> str | None:
    title = meta.get("title")
    return fold_whitespace(str(title)) if isinstance(title, (str, int, float)) and str(title).strip() else None


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
    return extract_markup(f"<html><body><main>{body}</main></body></html>", fallback_title)
