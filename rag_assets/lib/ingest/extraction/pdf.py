"""PDF (``.pdf``): every page's text through pypdf, a section per page, lines regrouped into paragraphs."""

from __future__ import annotations

import io
import logging

from rag_assets.lib.ingest.canonical import CanonicalBuilder, Extracted, fold_whitespace
from rag_assets.lib.ingest.doc_sources import SourceFile
from rag_assets.lib.ingest.extraction.base import ExtractionError


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


def extract_pdf(data: bytes, fallback_title: str, source: SourceFile | None = None) -> Extracted:
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
