"""Extraction: a document's bytes to one canonical text with its sections, by the canonical text rules
of ``rag_assets.lib.ingest.canonical``.

A module per format (``html``, ``markdown``, ``rst``, ``pdf``, ``text``; ``sphinx_pages`` for the pages
Sphinx builds), each with a reader of ``base.Reader``'s one signature; ``registry`` has an entry per
format (its suffixes, its reader, whether it is binary); ``dispatch`` runs the registered reader after
the checks every format shares; ``base`` holds the error, the extractor's version and decoding. This
module only re-exports.
"""

from rag_assets.lib.ingest.canonical import Extracted
from rag_assets.lib.ingest.extraction.base import (
    EXTRACTOR_NAME,
    EXTRACTOR_VERSION,
    DocumentFormat,
    ExtractionError,
    GeneratedFromCode,
    Reader,
)
from rag_assets.lib.ingest.extraction.dispatch import extract_document
from rag_assets.lib.ingest.extraction.html import MAX_NESTING, extract_html, nesting_depth
from rag_assets.lib.ingest.extraction.markdown import extract_markdown
from rag_assets.lib.ingest.extraction.pdf import extract_pdf
from rag_assets.lib.ingest.extraction.registry import EXTRACTORS, FORMAT_BY_SUFFIX, FORMATS
from rag_assets.lib.ingest.extraction.rst import extract_rst
from rag_assets.lib.ingest.extraction.sphinx_pages import extract_sphinx_html
from rag_assets.lib.ingest.extraction.text import extract_plain_text

__all__ = [
    "EXTRACTORS",
    "EXTRACTOR_NAME",
    "EXTRACTOR_VERSION",
    "FORMATS",
    "FORMAT_BY_SUFFIX",
    "MAX_NESTING",
    "DocumentFormat",
    "Extracted",
    "ExtractionError",
    "GeneratedFromCode",
    "Reader",
    "extract_document",
    "extract_html",
    "extract_markdown",
    "extract_pdf",
    "extract_plain_text",
    "extract_rst",
    "extract_sphinx_html",
    "nesting_depth",
]
