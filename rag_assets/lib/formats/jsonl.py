"""JSON Lines files, plain or gzipped, read line by line without failing on a bad line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Iterator


def read_json_lines(path: Path, label: str | None = None) -> Iterator[tuple[str, dict | None, str | None]]:
    """(``file:line``, object, None) per line of a JSON Lines file (gzipped when it ends in .gz), or
    (``file:line``, None, why) for a line that is not a JSON object; blank lines are skipped.
    ``label`` names the file in ``file:line`` (default: its path)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{label or path}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                yield where, None, f"{where}: not valid JSON ({error.msg})"
                continue
            if isinstance(record, dict):
                yield where, record, None
            else:
                yield where, None, f"{where}: expected a JSON object"
