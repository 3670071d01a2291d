"""One document's bytes to its canonical text: the checks every format shares, then its registered reader."""

from __future__ import annotations

from rag_assets.lib.ingest.canonical import Extracted
from rag_assets.lib.ingest.doc_sources import SourceFile
from rag_assets.lib.ingest.extraction.base import ExtractionError, GeneratedFromCode
from rag_assets.lib.ingest.extraction.registry import FORMATS


def extract_document(data: bytes, fmt: str, fallback_title: str, source: SourceFile | None = None) -> Extracted:
    """Canonical text and sections of one document; ExtractionError with the reason if unreadable."""
    if not data.strip():
        raise ExtractionError("empty file")
    entry = FORMATS.get(fmt)
    if not (entry and entry.binary) and b"\x00" in data[:8192]:
        raise ExtractionError("binary content (NUL bytes) in a text format")
    if entry is None:
        raise ExtractionError(f"unsupported format {fmt!r}")
    extracted = entry.reader(data, fallback_title, source)
    if not extracted.text.strip():
        if extracted.from_code:
            raise GeneratedFromCode(
                f"all its text is generated from the documented code ({extracted.from_code} autodoc or mkdocstrings "
                "block(s)), which is not imported: nothing to index (evaluation.run_tree_code runs a Sphinx tree's code)")
        raise ExtractionError("no text after extraction")
    return extracted
