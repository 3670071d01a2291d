"""Plain text (``.txt``, ``.text``): paragraphs between blank lines, a short first one as the title."""

from __future__ import annotations

import re

from rag_assets.lib.ingest.canonical import CanonicalBuilder, Extracted, fold_whitespace
from rag_assets.lib.ingest.doc_sources import SourceFile
from rag_assets.lib.ingest.extraction.base import decode


def extract_plain_text(data: bytes, fallback_title: str, source: SourceFile | None = None) -> Extracted:
    """Plain text: paragraphs are runs of lines between blank lines, whitespace folded.

    A short first paragraph without a sentence end is taken as the title.
    """
    builder = CanonicalBuilder()
    for block in re.split(r"\n\s*\n", decode(data).replace("\r\n", "\n")):
        paragraph = fold_whitespace(block)
        if paragraph:
            builder.add(paragraph)
    first = builder.paragraphs[0] if builder.paragraphs else ""
    looks_like_title = len(first) <= 80 and not first.endswith((".", "!", "?", ":"))
    return builder.build(first if looks_like_title else None, fallback_title)
