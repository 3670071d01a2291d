"""A sentence-transformers model of the plain shape as a fused fp32 ONNX graph, and its check.

The plain shape is a transformer, mean pooling and optional normalisation: then the graph needs to
give only the last hidden states, and mean pooling over them is the model's vector. The graph is
exported from the model's own weights, fused by onnxruntime's transformer optimiser, and accepted
only if it agrees with the PyTorch model on ``PROBES`` (every cosine at least
``ACCELERATED_MIN_COSINE``). Nothing here is imported until a caller asks for the ONNX path.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from rag_assets.lib.embed.vectors import l2_normalize

ACCELERATED_MIN_COSINE = 0.99999
PROBES = ("How do I descale a kettle?", "x", "A longer probe sentence, with punctuation; numbers 3.14 and code: "
          "def f(x): return x ** 2 # a comment that runs on for a while to fill more of the window " * 3)


def is_plain_mean_pooling(model) -> bool:
    """Whether a SentenceTransformer is a transformer, mean pooling and at most a normalisation."""
    names = [type(module).__name__ for module in model]
    pooling = model[1].get_config_dict() if len(names) > 1 else {}
    return names[:2] == ["Transformer", "Pooling"] and set(names[2:]) <= {"Normalize"} \
        and pooling.get("pooling_mode") == "mean"


def export_fused_graph(model, graph: Path) -> None:
    """Write the model's transformer (last hidden states) to ``graph``, fused for BERT, atomically."""
    import torch
    from onnxruntime.transformers import optimizer

    transformer = model[0].auto_model.eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = model.tokenizer(["export"], return_tensors="pt")
    graph.parent.mkdir(parents=True, exist_ok=True)
    raw = graph.with_name(f".{os.getpid()}.raw.onnx")
    axes = {"0": "batch", "1": "sequence"}
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes on shapes; the graph is verified after export
        torch.onnx.export(
            LastHiddenState(transformer), tuple(sample[n] for n in names), str(raw), input_names=names,
            output_names=["last_hidden_state"], opset_version=17, dynamo=False,
            dynamic_axes={n: {0: axes["0"], 1: axes["1"]} for n in [*names, "last_hidden_state"]},
        )
    config = transformer.config
    fused = optimizer.optimize_model(str(raw), model_type="bert", num_heads=config.num_attention_heads,
                                     hidden_size=config.hidden_size)
    staged = graph.with_name(f".{os.getpid()}.onnx")
    fused.save_model_to_file(str(staged))
    os.replace(staged, graph)
    raw.unlink(missing_ok=True)


_thread_limit: int | None = None  # set by limit_parallel_texts: the threads this process may use


def limit_parallel_texts(threads: int | None) -> None:
    """At most ``threads`` texts at once in this process (a run sharing the cores with others)."""
    global _thread_limit
    _thread_limit = threads


def parallel_texts() -> int:
    """How many texts run through a graph at once: one per core, at most 4 (and at most the process's limit)."""
    return max(1, min(os.cpu_count() or 1, 4, _thread_limit or 4))


def open_session(graph: Path):
    """An onnxruntime CPU session for ``graph``, quiet, each run on one thread.

    Texts run in parallel instead (``run_each``): on 2 cores, two single-threaded runs of one text
    each were 1.3-1.5x faster than one run on two threads (BENCHMARKS.md), as the matrices of a single
    short text are too small to split well across cores.
    """
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])


def run_each(run_one: Callable[[int], np.ndarray], lengths: Sequence[int]) -> list[np.ndarray]:
    """``run_one(i)`` for every item, ``parallel_texts()`` at a time, longest first so that the
    cores finish together; results in the order of the items. onnxruntime releases the GIL."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    results: list[np.ndarray] = [np.empty(0)] * len(lengths)
    if len(order) <= 1 or parallel_texts() == 1:
        for index in order:
            results[index] = run_one(index)
        return results
    with ThreadPoolExecutor(parallel_texts(), thread_name_prefix="onnx") as pool:
        for index, result in zip(order, pool.map(run_one, order)):
            results[index] = result
    return results


def agreement(reference_vectors: np.ndarray, candidate_vectors: np.ndarray) -> float:
    """The smallest cosine between a reference vector and the candidate vector in the same row."""
    cosines = (l2_normalize(reference_vectors) * l2_normalize(candidate_vectors)).sum(axis=1)
    return float(cosines.min())
