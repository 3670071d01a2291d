"""What every format's reader shares: the extractor's name and version, the error, the reader's one
signature, a format's registry entry, and the decoding of a text format's bytes.

A reader turns a document's bytes into an ``Extracted`` (``rag_assets.lib.ingest.canonical``: one
canonical text with its sections), or raises ``ExtractionError`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rag_assets.lib.ingest.canonical import Extracted
from rag_assets.lib.ingest.doc_sources import SourceFile

EXTRACTOR_NAME = "rag_assets.extraction"
EXTRACTOR_VERSION = "3"  # 2: documentation sources read as Sphinx and MkDocs render them
# 3: a tree's configuration above the corpus folder, autodoc without text (counted), a tree's own object types,
#    MkDocs autorefs and undeclared blocks, Docusaurus pages as MDX


class ExtractionError(ValueError):
    """The document cannot be read; the message is the reason recorded for it."""


class GeneratedFromCode(ExtractionError):
    """The document was read, and all its text is generated from the documented code (autodoc, mkdocstrings),
    which is not imported: a page with nothing to index, recorded as such (status ``generated``), not failed."""


class Reader(Protocol):
    """A format's reader: the document's bytes, the title to use when it has none, and where it lives
    (``None`` for a document given as bytes alone; a format that needs no tree ignores it)."""

    def __call__(self, data: bytes, fallback_title: str, source: SourceFile | None = None) -> Extracted: ...


@dataclass(frozen=True)
class DocumentFormat:
    """One format of the registry: the file suffixes it is read for, its reader, and whether it is a
    binary format (a text format's bytes holding NUL are refused before its reader runs)."""

    suffixes: tuple[str, ...]
    reader: Reader
    binary: bool = False


def decode(data: bytes, declared: str | None = None) -> str:
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
