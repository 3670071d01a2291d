"""The corpus snapshot: which files a folder holds, in what format, with which bytes.

The snapshot id is a hash of the manifest (path, size, sha256, format of every file, in path
order), so an unchanged folder yields the same id and any changed, added or removed file a new one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

FORMAT_BY_SUFFIX = {
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".text": "text",
    ".pdf": "pdf",
}
UNSUPPORTED = "unsupported"
BEIR_CORPUS = "beir-corpus"  # one file holding many documents
BEIR_EVAL = "beir-eval"  # queries, judgements and evidence of a BEIR folder: not documents
NOT_DOCUMENTS = (BEIR_EVAL,)
BEIR_CORPUS_FILES = ("corpus.jsonl", "corpus.jsonl.gz")  # the corpus file of a BEIR folder, plain or gzipped


class CorpusError(ValueError):
    """The corpus folder cannot serve as a corpus; the message names the folder."""


@dataclass(frozen=True)
class ManifestEntry:
    path: str  # relative to the corpus folder, with forward slashes; also the document id
    size: int
    sha256: str
    format: str


def detect_format(path: Path) -> str:
    return FORMAT_BY_SUFFIX.get(path.suffix.lower(), UNSUPPORTED)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def scan_corpus(folder: Path) -> list[ManifestEntry]:
    """Every non-hidden file under ``folder``, sorted by relative path.

    A BEIR folder (one holding ``corpus.jsonl`` or ``corpus.jsonl.gz``) has one document file, the
    corpus; its other files are evaluation data. Raises CorpusError naming the folder when it does
    not exist, is not a folder, or holds no file of a supported format.
    """
    folder = Path(folder)
    if not folder.exists():
        raise CorpusError(f"corpus folder {folder} does not exist")
    if not folder.is_dir():
        raise CorpusError(f"corpus folder {folder} is not a folder")
    beir = any((folder / name).is_file() for name in BEIR_CORPUS_FILES)
    entries = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if not path.is_file() or any(part.startswith(".") for part in relative.parts):
            continue
        if beir:
            fmt = BEIR_CORPUS if relative.as_posix() in BEIR_CORPUS_FILES else BEIR_EVAL
        else:
            fmt = detect_format(path)
        entries.append(ManifestEntry(path=relative.as_posix(), size=path.stat().st_size, sha256=_sha256(path), format=fmt))
    if not any(entry.format not in (UNSUPPORTED, *NOT_DOCUMENTS) for entry in entries):
        supported = ", ".join(sorted(set(FORMAT_BY_SUFFIX)))
        raise CorpusError(
            f"corpus folder {folder} holds no readable document "
            f"({len(entries)} files, none with a supported suffix: {supported})"
        )
    return entries


def snapshot_id(entries: list[ManifestEntry]) -> str:
    """A short, stable hash of the manifest."""
    canonical = json.dumps([asdict(entry) for entry in entries], sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
