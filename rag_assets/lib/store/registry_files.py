"""A registry file (models, external retrievers) read when it is needed and again only when it changed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Generic, TypeVar

Read = TypeVar("Read")


class RegistryFile(Generic[Read]):
    """``read(path)``, kept while the file's time and size are unchanged; a file that cannot be stat'ed is
    ``unavailable(why)`` (an exception naming the setting and the file)."""

    def __init__(self, read: Callable[[Path], Read], unavailable: Callable[[str], Exception]) -> None:
        self.read, self.unavailable = read, unavailable
        self.kept: dict[tuple[str, int, int], Read] = {}

    def get(self, path: str) -> Read:
        try:
            status = os.stat(path)
        except OSError as error:
            raise self.unavailable(str(error.strerror or error)) from error
        key = (path, status.st_mtime_ns, status.st_size)
        if key not in self.kept:
            self.kept.clear()
            self.kept[key] = self.read(Path(path))
        return self.kept[key]
