"""The documents of a BEIR corpus file (``corpus.jsonl[.gz]``): one per line, ``{"_id", "title", "text"}``.

A document's canonical text is its title as a heading, then its text with whitespace folded. The
judgements of a BEIR folder (queries, qrels, evidence) are in ``rag_assets.lib.evalsets.beir``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from rag_assets.lib.formats.jsonl import read_json_lines
from rag_assets.lib.ingest.canonical import CanonicalBuilder, Extracted, fold_whitespace
from rag_assets.lib.ingest.corpus import BEIR_CORPUS_FILES
from rag_assets.lib.ingest.extraction import ExtractionError


def corpus_file(folder: Path) -> Path | None:
    for name in BEIR_CORPUS_FILES:
        if (Path(folder) / name).is_file():
            return Path(folder) / name
    return None


def is_beir_folder(folder: Path) -> bool:
    return Path(folder).is_dir() and corpus_file(folder) is not None


def beir_document(record: dict, where: str) -> tuple[str, Extracted]:
    """(doc id, canonical text and sections) of one corpus line; ExtractionError says why not."""
    if "_id" not in record:
        raise ExtractionError(f"{where}: no _id")
    title = fold_whitespace(str(record.get("title") or ""))
    text = fold_whitespace(str(record.get("text") or ""))
    if not text and not title:
        raise ExtractionError(f"{where}: empty document")
    builder = CanonicalBuilder()
    if title:
        builder.add_heading(1, title, None)
    if text:
        builder.add(text)
    return str(record["_id"]), builder.build(title or None, str(record["_id"]))


def iter_corpus(path: Path) -> Iterator[tuple[str, dict | None, str | None]]:
    """(``file:line``, record, None) per document of a corpus file; (``file:line``, None, why) per bad line."""
    yield from read_json_lines(Path(path), Path(path).name)
