"""reStructuredText (``.rst``) as Sphinx renders it, or docutils for bytes given alone; then the HTML rules."""

from __future__ import annotations

from rag_assets.lib.ingest.canonical import Extracted
from rag_assets.lib.ingest.doc_sources import SPHINX, SourceFile, tree_of
from rag_assets.lib.ingest.extraction.base import ExtractionError, decode
from rag_assets.lib.ingest.extraction.html import extract_markup
from rag_assets.lib.ingest.extraction.sphinx_pages import extract_sphinx_page


def extract_rst(data: bytes, fallback_title: str, source: SourceFile | None = None) -> Extracted:
    """reStructuredText as Sphinx renders it (``sphinx_sources``), its tree's page or, outside a tree, the
    corpus folder's reStructuredText built as one project; without a source (a document given as bytes
    alone), docutils to HTML. Then the HTML rules; sections keep their ids."""
    if source is not None:
        tree = tree_of(source)
        sphinx = tree if tree and tree.tool == SPHINX else None
        return extract_sphinx_page(source, sphinx.folder if sphinx else None, fallback_title,
                                   sphinx.config if sphinx else None)
    from docutils.core import publish_parts

    text = decode(data)
    try:
        parts = publish_parts(
            text,
            writer="html5",
            settings_overrides={
                "report_level": 5, "halt_level": 5, "doctitle_xform": False, "input_encoding": "unicode",
                "file_insertion_enabled": False, "raw_enabled": False, "syntax_highlight": "none",
            },
        )
    except Exception as error:  # docutils raises many types on malformed input
        raise ExtractionError(f"reStructuredText could not be parsed: {error}") from error
    return extract_markup(f"<html><body><main>{parts['html_body']}</main></body></html>", fallback_title)
