"""The document formats, one entry each: the suffixes a file is read for, its reader, and whether it is
binary. Adding a format is a module with its reader (``base.Reader``'s signature) and one entry here."""

from __future__ import annotations

from rag_assets.lib.ingest.extraction.base import DocumentFormat, Reader
from rag_assets.lib.ingest.extraction.html import extract_html
from rag_assets.lib.ingest.extraction.markdown import extract_markdown
from rag_assets.lib.ingest.extraction.pdf import extract_pdf
from rag_assets.lib.ingest.extraction.rst import extract_rst
from rag_assets.lib.ingest.extraction.text import extract_plain_text

FORMATS: dict[str, DocumentFormat] = {
    "html": DocumentFormat((".html", ".htm", ".xhtml"), extract_html),
    "markdown": DocumentFormat((".md", ".markdown", ".mdx"), extract_markdown),
    "rst": DocumentFormat((".rst",), extract_rst),
    "text": DocumentFormat((".txt", ".text"), extract_plain_text),
    "pdf": DocumentFormat((".pdf",), extract_pdf, binary=True),
}
EXTRACTORS: dict[str, Reader] = {name: entry.reader for name, entry in FORMATS.items()}
FORMAT_BY_SUFFIX: dict[str, str] = {suffix: name for name, entry in FORMATS.items() for suffix in entry.suffixes}
