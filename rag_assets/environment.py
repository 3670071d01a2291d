"""The process environment as rag_assets writes and inherits it: not settings of rag_assets (those are
``settings.py``'s), but what a process passes on to its children (``DAGSTER_HOME``, ``--debug``), what the
model libraries must see (offline), and what a cluster worker inherited. With ``settings.py``, the only
module that touches ``os.environ``; lib/ may use it, never the settings."""

from __future__ import annotations

import os
from pathlib import Path

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
