"""The ONNX mean-pooling loader: a transformer graph a package ships, run by onnxruntime."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from rag_assets.lib.embed.embedder import EmbedderBase
from rag_assets.lib.embed.spec import ModelSpec, distribution_file


class OnnxMeanPoolingEmbedder(EmbedderBase):
    """An ONNX transformer graph run by onnxruntime, mean-pooled over the attention mask."""

    @classmethod
    def weight_files(cls, spec: ModelSpec) -> list[Path]:
        graph = Path(spec.folder) / "model.onnx" if spec.folder else distribution_file(spec, spec.package, ".onnx")
        tokenizer = distribution_file(spec, spec.tokenizer_package or spec.package, "model/tokenizer.json")
        return [graph, tokenizer]

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.revision = self.installed_revision(spec)
        self._open(*self.weight_files(spec))

    def _open(self, graph: Path, tokenizer: Path) -> None:
        """The onnxruntime session of ``graph`` and the tokenizer of ``tokenizer`` (truncating at the window)."""
        from tokenizers import Tokenizer

        from rag_assets.lib.embed.onnx_graph import open_session

        self.session = open_session(graph)
        self.inputs = {i.name for i in self.session.get_inputs()}
        # the per-token output is the float one with a sequence axis: (batch, sequence, dimension)
        self.token_output = next(o.name for o in self.session.get_outputs()
                                 if o.type == "tensor(float)" and len(o.shape) == 3)
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(max_length=self.spec.window or 512)
        self.tokenizer.no_padding()
        self._plain = Tokenizer.from_file(str(tokenizer))
        self._plain.no_truncation()
        self._plain.no_padding()

    special_tokens = 2  # [CLS] and [SEP]

    def _hidden(self, texts: list[str]) -> list[np.ndarray]:
        """The token vectors of each text, one text per run (nothing padded), texts in parallel."""
        from rag_assets.lib.embed.onnx_graph import run_each

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


class ExportedGraphEmbedder(OnnxMeanPoolingEmbedder):
    """A sentence-transformers model run from its verified ONNX export (``onnx/<key>/<revision>/model.onnx``,
    written and checked against PyTorch by ``SentenceTransformerEmbedder``) with its tokenizer alone: the
    same vectors, without importing PyTorch or sentence-transformers, for a cold ``ask``."""

    def __init__(self, spec: ModelSpec, graph: Path, tokenizer: Path, revision: str) -> None:
        self.spec, self.revision = spec, revision
        self._open(graph, tokenizer)
        self.runtime = "onnxruntime"
