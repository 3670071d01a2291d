"""Extracted-text rows: a corpus manifest entry to one row per document it holds, and back.

A row holds the document's canonical text and sections, or status ``failed`` and the reason.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from rag_assets.lib.formats.markdown import escape_markdown, markdown_table
from rag_assets.lib.ingest import beir_corpus
from rag_assets.lib.ingest.canonical import Extracted, Section
from rag_assets.lib.ingest.corpus import BEIR_CORPUS, CONFIGURATION, NOT_DOCUMENTS
from rag_assets.lib.ingest.doc_sources import SourceFile, configuration_kind, syntax_lines, trees_used
from rag_assets.lib.ingest.extraction import (
    EXTRACTOR_NAME,
    EXTRACTOR_VERSION,
    ExtractionError,
    GeneratedFromCode,
    extract_document,
)

GENERATED = "generated"  # a page whose text is all generated from the documented code: read, nothing to index


def _row(doc_id: str, fmt: str) -> dict:
    return {"doc_id": doc_id, "format": fmt, "title": None, "text": None, "sections": [], "status": "failed",
            "error": None, "extractor": EXTRACTOR_NAME, "extractor_version": EXTRACTOR_VERSION,
            "syntax_lines": 0, "unknown_constructs": 0, "from_code": 0}


def _ok(row: dict, extracted: Extracted) -> dict:
    return row | {
        "title": extracted.title,
        "text": extracted.text,
        "sections": [
            {"path": s.path, "heading": s.heading, "level": s.level, "anchor": s.anchor, "start": s.start, "end": s.end}
            for s in extracted.sections
        ],
        "status": "ok",
        "syntax_lines": syntax_lines(extracted.text, extracted.code_spans),
        "unknown_constructs": extracted.unknown_constructs,
        "from_code": extracted.from_code,
    }


def _read_checked(root: Path, path: str, sha256: str, max_bytes: int) -> bytes:
    file_path = root / path
    size = file_path.stat().st_size
    if size > max_bytes:
        raise ExtractionError(f"file of {size} bytes is over the {max_bytes}-byte limit")
    data = file_path.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ExtractionError("file changed since the corpus snapshot; re-materialise corpus_snapshot")
    return data


def extract_file(root: Path, path: str, fmt: str, sha256: str, max_bytes: int, run_tree_code: bool = False) -> dict:
    """One extracted-text row for a manifest entry; a broken document gets status 'failed' and why.

    The file is re-hashed: one that changed since the snapshot fails rather than being silently
    extracted from other bytes than the snapshot recorded.
    """
    row = _row(path, fmt)
    try:
        extracted = extract_document(_read_checked(root, path, sha256, max_bytes), fmt, fallback_title=Path(path).stem,
                                     source=SourceFile(root, path, run_tree_code))
    except GeneratedFromCode as error:
        return row | {"status": GENERATED, "error": str(error)}
    except (ExtractionError, OSError) as error:
        return row | {"error": str(error)}
    return _ok(row, extracted)


def extract_entry(root: Path, path: str, fmt: str, sha256: str, max_bytes: int,
                  run_tree_code: bool = False) -> list[dict]:
    """The extracted-text rows of a manifest entry: one per document it holds (none for evaluation data or a
    tree's configuration). ``run_tree_code``: a Sphinx tree's conf.py and extensions run (``sphinx_sources``)."""
    if fmt in NOT_DOCUMENTS:
        return []
    if fmt != BEIR_CORPUS:
        return [extract_file(root, path, fmt, sha256, max_bytes, run_tree_code)]
    try:
        _read_checked(root, path, sha256, max_bytes)
        rows = []
        for where, record, problem in beir_corpus.iter_corpus(root / path):
            try:
                if problem:
                    raise ExtractionError(problem)
                doc_id, extracted = beir_corpus.beir_document(record, where)
            except ExtractionError as error:
                rows.append(_row(str((record or {}).get("_id", f"{path}#{where}")), fmt) | {"error": str(error)})
                continue
            rows.append(_ok(_row(doc_id, fmt), extracted))
        return rows
    except (ExtractionError, OSError, EOFError, UnicodeDecodeError) as error:
        return [_row(path, fmt) | {"error": str(error)}]


def canonical_texts(rows) -> dict[str, str]:
    """doc id -> canonical text of the documents that were extracted (failed ones have none)."""
    return {row["doc_id"]: row["text"] for row in rows if row["status"] == "ok"}


def sections_from_rows(rows: list[dict]) -> list[Section]:
    return [
        Section(path=r["path"], heading=r["heading"], level=r["level"], anchor=r["anchor"],
                start=r["start"], end=r["end"])
        for r in rows
    ]


def corpus_documents(corpus: Path, stored: Path, max_bytes: int,
                     run_tree_code: bool = False) -> dict[str, tuple[str, list[dict]]]:
    """{doc id: (canonical text, sections)} of the corpus, extracted as the graph extracts it: from
    ``stored`` (an ``extracted_text`` partition) when it is of this very snapshot and extractor, else now."""
    import pyarrow.parquet as pq

    from rag_assets.lib.ingest.corpus import scan_corpus, snapshot_id

    corpus = corpus.resolve()
    entries = scan_corpus(corpus, {})
    if stored.is_file():
        rows = pq.ParquetFile(stored).read().to_pylist()
        if rows and rows[0]["snapshot_id"] == snapshot_id(entries) and rows[0]["extractor_version"] == EXTRACTOR_VERSION:
            return {r["doc_id"]: (r["text"], r["sections"]) for r in rows if r["status"] == "ok"}
    return {row["doc_id"]: (row["text"], row["sections"]) for entry in entries
            for row in extract_entry(corpus, entry.path, entry.format, entry.sha256, max_bytes, run_tree_code)
            if row["status"] == "ok"}


def corpus_refusal(root: Path, entries: list, max_bytes: int) -> str | None:
    """The refusal ``nothing_extracted`` would give this corpus, found before its snapshot is written, so
    that a refused corpus never replaces the last good snapshot. Documents are extracted in order until
    one succeeds (a good corpus costs one document; a BEIR corpus file is read up to its first good
    record); only a corpus where every document fails is extracted whole, to name each failure."""
    failed: list[dict] = []
    for entry in entries:
        if entry.format == BEIR_CORPUS:
            try:
                _read_checked(root, entry.path, entry.sha256, max_bytes)
                for where, record, problem in beir_corpus.iter_corpus(root / entry.path):
                    if not problem:
                        try:
                            beir_corpus.beir_document(record, where)
                            return None
                        except ExtractionError:
                            pass
            except (ExtractionError, OSError, EOFError, UnicodeDecodeError):
                pass  # extract_entry below names the failure
        rows = extract_entry(root, entry.path, entry.format, entry.sha256, max_bytes)
        if any(row["status"] == "ok" for row in rows):
            return None
        failed.extend(rows)
    return nothing_extracted(extraction_summary(failed), str(root))


def extraction_summary(rows: list[dict], largest: int = 5) -> dict:
    """Counts over extracted-text rows as written (never declared), and the largest documents."""
    ok = [row for row in rows if row["status"] == "ok"]
    formats: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = formats.setdefault(row["format"], {"ok": 0, "failed": 0})
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    biggest = sorted(ok, key=lambda row: len(row["text"]), reverse=True)[:largest]
    table = markdown_table([("document", lambda r: escape_markdown(r["doc_id"])), ("format", lambda r: r["format"]),
                            ("characters", lambda r: len(r["text"])), ("sections", lambda r: len(r["sections"]))],
                           biggest)
    unfaithful = sorted((row for row in ok if row.get("syntax_lines") or row.get("unknown_constructs")),
                        key=lambda row: (-(row.get("syntax_lines") or 0), -(row.get("unknown_constructs") or 0)))
    fidelity = markdown_table([("document", lambda r: escape_markdown(r["doc_id"])),
                               ("lines with source syntax", lambda r: r.get("syntax_lines") or 0),
                               ("constructs kept or dropped unrendered", lambda r: r.get("unknown_constructs") or 0)],
                              unfaithful[:largest]) if unfaithful else ""
    return {
        "from_code": sum(row.get("from_code") or 0 for row in ok),
        "syntax_lines": sum(row.get("syntax_lines") or 0 for row in ok),
        "unknown_constructs": sum(row.get("unknown_constructs") or 0 for row in ok),
        "fidelity_table": fidelity,
        "documents": len(rows),
        "ok": len(ok),
        "failed": sum(row["status"] == "failed" for row in rows),
        "failures": {row["doc_id"]: row["error"] for row in rows if row["status"] == "failed"},
        # pages whose text is all generated from the documented code: read, nothing to index, not failed
        "generated": sorted(row["doc_id"] for row in rows if row["status"] == GENERATED),
        "characters": sum(len(row["text"]) for row in ok),
        "sections": sum(len(row["sections"]) for row in ok),
        "formats": formats,
        "largest_table": table,
    }


def tree_configuration(entries: list[dict], corpus_dir: Path,
                       run_tree_code: bool = False) -> tuple[list[dict], dict[str, str]]:
    """(which tree configuration the snapshot's documents were read with: ``doc_sources.trees_used``, the
    configuration files the snapshot holds with what each is), for the extraction summary."""
    root = Path(entries[0]["corpus_dir"]) if entries else Path(corpus_dir)
    trees = trees_used(root, [e["path"] for e in entries if e["format"] in ("markdown", "rst")], run_tree_code)
    return trees, {e["path"]: configuration_kind(root, e["path"]) for e in entries if e["format"] == CONFIGURATION}


def nothing_extracted(summary: dict, corpus_dir: str) -> str | None:
    """Why there is nothing to evaluate when every document of the corpus failed, naming each; else None."""
    if summary["ok"] or not summary["documents"]:
        return None
    reasons = "; ".join(f"{doc_id}: {error}" for doc_id, error in sorted(summary["failures"].items()))
    return (f"every one of the {summary['documents']} documents of {corpus_dir} failed extraction, so there is "
            f"nothing to evaluate: {reasons}")
