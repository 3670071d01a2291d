"""Where rag_assets reads its defaults and writes its outputs.

All outputs live under one storage folder: ``$RAG_ASSETS_HOME``, or ``storage/`` in the project
(ignored by git) when the variable is unset. Nothing is written to the current directory.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS_DIR = PROJECT_ROOT / "data" / "corpus" / "python-3.11-docs" / "html"
DEFAULT_EVAL_SET = PROJECT_ROOT / "data" / "eval" / "python-3.11-docs.needles.jsonl"
DEFAULT_OUT_OF_DOMAIN = PROJECT_ROOT / "data" / "eval" / "python-3.11-docs.out_of_domain.jsonl"
HOME_ENV_VAR = "RAG_ASSETS_HOME"


def configured_input(env_var: str, default: Path) -> str:
    """An input path from the environment (``RAG_ASSETS_CORPUS``, ``RAG_ASSETS_EVAL_SET``,
    ``RAG_ASSETS_OUT_OF_DOMAIN``), else the project's default; the UI and the command line share it."""
    return os.environ.get(env_var, str(default))


def corpus_dir() -> str:
    return configured_input("RAG_ASSETS_CORPUS", DEFAULT_CORPUS_DIR)


def eval_set() -> str:
    return configured_input("RAG_ASSETS_EVAL_SET", DEFAULT_EVAL_SET)


def out_of_domain() -> str:
    return configured_input("RAG_ASSETS_OUT_OF_DOMAIN", DEFAULT_OUT_OF_DOMAIN)


def storage_home() -> Path:
    """The storage folder, absolute, from ``$RAG_ASSETS_HOME`` or the project default."""
    configured = os.environ.get(HOME_ENV_VAR)
    return Path(configured).expanduser().resolve() if configured else PROJECT_ROOT / "storage"


def duckdb_path(home: Path) -> Path:
    return home / "metrics.duckdb"


def parquet_root(home: Path) -> Path:
    return home / "parquet"


def onnx_dir(home: Path) -> Path:
    return home / "onnx"


def dagster_home(home: Path) -> Path:
    return home / "dagster"


def partition_path(home: Path, asset: str, dimensions: list[tuple[str, str]] | None = None) -> Path:
    """The Parquet file of one partition: ``<asset>/<dim>=<key>/.../data.parquet`` (Hive layout)."""
    folder = parquet_root(home) / asset
    for name, key in dimensions or []:
        folder = folder / f"{name}={key}"
    return folder / "data.parquet"


def partition_files(home: Path, asset: str) -> list[Path]:
    """Every materialised partition file of an asset, in path order (Hive layout, see resources)."""
    return sorted((parquet_root(home) / asset).rglob("data.parquet"))
