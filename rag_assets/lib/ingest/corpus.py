"""The corpus snapshot: which files a folder holds, in what format, with which bytes.

The snapshot id is a hash of the manifest (path, size, sha256, format of every file, in path
order), so an unchanged folder yields the same id and any changed, added or removed file a new one.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

from rag_assets.lib.ingest.doc_sources import configuration_kind
from rag_assets.lib.ingest.extraction.registry import FORMAT_BY_SUFFIX  # the formats, declared once
from rag_assets.lib.store.names import PROJECT_FILE_NAME

UNSUPPORTED = "unsupported"
BEIR_CORPUS = "beir-corpus"  # one file holding many documents
BEIR_EVAL = "beir-eval"  # queries, judgements and evidence of a BEIR folder: not documents
CONFIGURATION = "configuration"  # a documentation tree's configuration (conf.py, mkdocs.yml, ...): not documents
NOT_DOCUMENTS = (BEIR_EVAL, CONFIGURATION)
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


def project_inputs(eval_set: str = "", out_of_domain: str = "", models_file: str = "", retrievers_file: str = "",
                   home: str = "") -> dict[Path, str]:
    """The evaluation's own files and folders, {resolved path: what it is}: a corpus that holds them (``init``
    in a folder without ``docs/`` sets the corpus to the project's folder) leaves them out, never indexed."""
    named = {eval_set: "the evaluation set", out_of_domain: "the out-of-domain questions",
             models_file: "the model registry file", retrievers_file: "the external retrievers file"}
    found = {Path(path).expanduser().resolve(): what for path, what in named.items()
             if path and not Path(path).is_dir()}  # a BEIR evaluation set is the corpus's own folder: not left out
    return found | ({Path(home).expanduser().resolve(): "the storage folder"} if home else {})


def _project_input(path: Path, inputs: dict[Path, str]) -> str | None:
    """Why ``path`` is one of the evaluation's own files (or lies in its storage folder), else None."""
    if path.name == PROJECT_FILE_NAME:
        return "the project file"
    resolved = path.resolve()
    for place, what in inputs.items():
        if resolved == place or resolved.is_relative_to(place):
            return what
    return None


def scan_corpus(folder: Path, skipped: dict[str, str] | None = None,
                inputs: dict[Path, str] | None = None) -> list[ManifestEntry]:
    """Every non-hidden file under ``folder``, sorted by relative path.

    A BEIR folder (one holding ``corpus.jsonl`` or ``corpus.jsonl.gz``) has one document file, the
    corpus; its other files are evaluation data. A documentation tree's configuration (``conf.py`` and its
    local extensions, ``mkdocs.yml``, ``docusaurus.config.*``, sidebars: ``doc_sources.configuration_kind``)
    is listed as such, never read as a document; the evaluation's own files (``inputs``, a project file) are
    left out with their reason. Raises CorpusError naming the folder when it does
    not exist, is not a folder, or holds no file of a supported format. What cannot be a document
    (a name that is not UTF-8, a broken or looping symbolic link, an unreadable folder) is left out
    and put in ``skipped`` as {relative path: reason}, never dropped silently.
    """
    folder = Path(folder)
    if not folder.exists():
        raise CorpusError(f"corpus folder {folder} does not exist")
    if not folder.is_dir():
        raise CorpusError(f"corpus folder {folder} is not a folder")
    beir = any((folder / name).is_file() for name in BEIR_CORPUS_FILES)
    files, left_out = walk_files(folder)
    if skipped is not None:
        skipped.update(left_out)
    entries = []
    for path in files:
        relative = path.relative_to(folder)
        own = _project_input(path, inputs or {})
        if own:  # the evaluation's own file: left out, with its reason
            if skipped is not None:
                skipped[relative.as_posix()] = f"{own} of this evaluation, not a document"
            continue
        if beir:
            fmt = BEIR_CORPUS if relative.as_posix() in BEIR_CORPUS_FILES else BEIR_EVAL
        elif configuration_kind(folder, relative.as_posix()):
            fmt = CONFIGURATION
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


def walk_files(folder: Path) -> tuple[list[Path], dict[str, str]]:
    """(every non-hidden file under ``folder`` in path order, {relative path: why left out}).

    An explicit stack, not recursion, so any depth of folders is walked. Symbolic links are followed
    (to files and folders) while they stay inside the corpus folder: one that leads outside it is left
    out, never read (a corpus is what lies inside its folder), as is one that leads back to a folder it
    is inside (a loop), a broken link, an unreadable folder and a name that is not UTF-8 (shown with its
    bytes escaped), each with its reason.
    """
    files, skipped = [], {}
    inside = Path(folder).resolve()
    top = folder.stat()
    stack = [(folder, frozenset({(top.st_dev, top.st_ino)}))]
    while stack:
        directory, ancestors = stack.pop()
        try:
            with os.scandir(directory) as scanned:
                children = sorted(scanned, key=lambda entry: entry.name)
        except OSError as error:
            skipped[_shown(directory, folder)] = f"folder cannot be read: {error.strerror}"
            continue
        for entry in children:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            shown = _shown(path, folder)
            if not _is_utf8(path.relative_to(folder)):
                skipped[shown] = "the file name is not valid UTF-8: rename it to include it"
                continue
            try:
                status = os.stat(path)  # follows a symbolic link
            except OSError as error:
                reason = "symbolic link loop" if error.errno == errno.ELOOP else "broken symbolic link" \
                    if entry.is_symlink() else f"cannot be read: {error.strerror}"
                skipped[shown] = f"{reason} ({os.readlink(path) if entry.is_symlink() else error.strerror})"
                continue
            if entry.is_symlink():
                target = path.resolve()
                if target != inside and inside not in target.parents:
                    skipped[shown] = (f"symbolic link leads outside the corpus folder ({os.readlink(path)}): not "
                                      "read; a corpus is what lies inside its folder")
                    continue
            if stat.S_ISDIR(status.st_mode):
                key = (status.st_dev, status.st_ino)
                if key in ancestors:
                    skipped[shown] = f"symbolic link loop: leads back to a folder it is in ({os.readlink(path)})"
                    continue
                stack.append((path, ancestors | {key}))
            elif stat.S_ISREG(status.st_mode):
                files.append(path)
    return sorted(files), skipped


def _is_utf8(relative: Path) -> bool:
    try:
        relative.as_posix().encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(path: Path, folder: Path) -> str:
    """A relative path as text that can always be printed and stored (undecodable bytes escaped)."""
    relative = path.relative_to(folder).as_posix() if path != folder else "."
    return os.fsencode(relative).decode("utf-8", "backslashreplace")


def snapshot_id(entries: list[ManifestEntry]) -> str:
    """A short, stable hash of the manifest."""
    canonical = json.dumps([asdict(entry) for entry in entries], sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
