"""JSON Lines files, plain or gzipped, read line by line without failing on a bad line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Iterator


def read_json_lines(path: Path, label: str | None = None, max_line_chars: int | None = None
                    ) -> Iterator[tuple[str, dict | None, str | None]]:
    """(``file:line``, object, None) per line of a JSON Lines file (gzipped when it ends in .gz), or
    (``file:line``, None, why) for a line that is not a JSON object; blank lines are skipped.
    ``label`` names the file in ``file:line`` (default: its path). A line longer than ``max_line_chars``
    is refused as it is read, without holding more than that much of it in memory."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        number = 0
        while True:
            line = handle.readline(max_line_chars + 1) if max_line_chars else handle.readline()
            if not line:
                return
            number += 1
            where = f"{label or path}:{number}"
            if max_line_chars and len(line) > max_line_chars and not line.endswith("\n"):
                while line and not line.endswith("\n"):  # the rest of the line, a block at a time
                    line = handle.readline(1 << 20)
                yield where, None, f"{where}: the line is longer than {max_line_chars:,} characters, the most a line " \
                                   "of this file may hold"
                continue
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                yield where, None, f"{where}: not valid JSON ({error.msg})"
                continue
            if isinstance(record, dict):
                yield where, record, None
            else:
                yield where, None, f"{where}: expected a JSON object"
