"""Names that become paths: model keys, strategy names, external retriever keys, export files.

A registered name ends up as a folder or file name under the storage folder (``embedding_cache/<model>/``,
``parquet/embeddings/model=<model>/``, ``<model>__<strategy>__<retriever>.run``), so it is checked when it
is registered, against one strict pattern: letters, digits, ``.``, ``_`` and ``-``, starting and ending with
a letter or digit, at most 64 characters, no ``..`` (a parent folder) and no ``__`` (the separator of
export file names). ``inside`` builds a path from such names and refuses one that would resolve outside
its root, whatever the name: the second guard, for a name that did not pass through registration.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PROJECT_FILE_NAME = "rag-assets.toml"  # the project file; one inside the corpus is never a document

NAME_PATTERN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?")
RULE = ("letters, digits, '.', '_' and '-', starting and ending with a letter or digit, at most 64 characters, "
        "without '..' or '__'")


class UnsafeName(ValueError):
    """A name that cannot become a path; the message names where it came from and the rule."""

    paragraph = True  # the CLI prints the message as it is


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be used as a folder or file name, or None."""
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not a string"
    if "\x00" in name:
        return "contains a NUL character"
    if len(name) > 64:
        return f"is {len(name)} characters long"
    if not NAME_PATTERN.fullmatch(name):
        return "contains a character outside the allowed set" if name else "is empty"
    if ".." in name or "__" in name:
        return "contains '..'" if ".." in name else "contains '__'"
    return None


def check_name(name: object, what: str) -> str:
    """``name`` itself when it is safe; else UnsafeName naming ``what`` (``"model key ... in <file>, entry 3"``)."""
    problem = name_problem(name)
    if problem:
        shown = repr(name) if not isinstance(name, str) or len(name) <= 80 else repr(name[:80] + "...")
        raise UnsafeName(f"{what} {shown} {problem}; a name becomes a folder or file name, so it must be {RULE}.")
    return name


def inside(root: Path, *parts: str) -> Path:
    """``root / part / ...``, refused (UnsafeName) when it would resolve outside ``root``: an absolute
    part, a ``..`` part, a NUL character, or a link that leads out."""
    path = Path(root)
    for part in parts:
        if "\x00" in part or not part or Path(part).is_absolute() or any(p in ("..", ".", "") for p in part.split("/")):
            raise UnsafeName(f"path part {part!r} would lead outside {root}; {RULE}.")
        path = path / part
    real_root = os.path.realpath(root)
    if os.path.commonpath([real_root, os.path.realpath(path)]) != real_root:
        raise UnsafeName(f"{path} resolves outside {root}.")
    return path
