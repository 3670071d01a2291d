"""The sentence-transformers loader: a model folder a package installed, on the CPU, with PyTorch or
as an ONNX graph exported from the same weights."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import numpy as np

from rag_assets.environment import keep_models_offline
from rag_assets.lib.embed.embedder import EmbedderBase
from rag_assets.lib.embed.spec import ModelSpec, files_revision, package_folder
from rag_assets.lib.store.names import inside

# Files whose bytes define what a sentence-transformers model computes.
_REVISION_SUFFIXES = (".safetensors", ".bin", ".onnx", ".json", ".txt", ".model")


VERIFIED = "verified"  # beside an ONNX export whose vectors agreed with PyTorch's


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
        folder = package_folder(spec)
        return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in _REVISION_SUFFIXES)

    @classmethod
    def installed_revision(cls, spec: ModelSpec) -> str:
        """Names relative to the model folder, so that a copied folder has the same revision."""
        return files_revision(cls.weight_files(spec), package_folder(spec))

    @classmethod
    def load(cls, spec: ModelSpec, onnx_dir: Path | None = None) -> SentenceTransformerEmbedder:
        return cls(spec, onnx_dir=onnx_dir)

    def __init__(self, spec: ModelSpec, batch_size: int = 32, onnx_dir: Path | None = None) -> None:
        keep_models_offline()
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.utils.logging.disable_progress_bar()  # loading local weights takes no time worth a bar

        self.spec = spec
        self.folder = package_folder(spec)
        self.revision = self.installed_revision(spec)
        self.batch_size = batch_size
        self.model = SentenceTransformer(str(self.folder), device="cpu")
        self.session = None
        self.runtime = "pytorch"
        if onnx_dir is not None:
            self._accelerate(inside(Path(onnx_dir), spec.key, self.revision))

    @classmethod
    def verified_export(cls, spec: ModelSpec, onnx_dir: Path) -> tuple[Path, Path, str] | None:
        """(the verified ONNX export, the tokenizer file, the revision) when both are on disk, else None.
        The revision is cached by the weight files' sizes and times (``revisions.json``): hashing 90 MB of
        weights is most of a cold ask's time."""
        import json

        files = cls.weight_files(spec)
        signature = "|".join(f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files)
        cache = inside(Path(onnx_dir), spec.key, "revisions.json")
        try:
            known = json.loads(cache.read_text()) if cache.is_file() else {}
        except (OSError, ValueError):
            known = {}
        revision = known.get(signature)
        if revision is None:
            revision = cls.installed_revision(spec)
            try:
                cache.parent.mkdir(parents=True, exist_ok=True)
                cache.write_text(json.dumps({signature: revision}))
            except OSError:
                pass  # a read-only folder: hashed again next time
        folder = inside(Path(onnx_dir), spec.key, revision)
        tokenizer = package_folder(spec) / "tokenizer.json"
        if (folder / "model.onnx").is_file() and (folder / VERIFIED).is_file() and tokenizer.is_file():
            return folder / "model.onnx", tokenizer, revision
        return None

    @property
    def tokenizer(self):
        return self.model.tokenizer

    @property
    def special_tokens(self) -> int:
        return int(self.tokenizer.num_special_tokens_to_add(pair=False))

    def _accelerate(self, folder: Path) -> None:
        from rag_assets.lib.embed import onnx_graph

        if not onnx_graph.is_plain_mean_pooling(self.model):
            return
        graph = folder / "model.onnx"
        try:
            if not graph.is_file():
                onnx_graph.export_fused_graph(self.model, graph)
            self.session = onnx_graph.open_session(graph)
        except Exception as error:  # noqa: BLE001 - any failure leaves the PyTorch path, which is always right
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
        (folder / VERIFIED).write_text(f"{cosine:.8f}\n")  # a cold ask may run the graph without PyTorch

    def _encode_pytorch(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                 normalize_embeddings=False, show_progress_bar=False)

    def _hidden_onnx(self, texts: list[str]) -> list[np.ndarray]:
        """Last hidden states of each text, one text per run (nothing padded), texts in parallel."""
        from rag_assets.lib.embed.onnx_graph import run_each

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
