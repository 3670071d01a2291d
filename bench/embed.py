"""Embedding speed: plain SentenceTransformer.encode against rag_assets' embedding path, same run.

    .venv/bin/python bench/embed.py [--strategy blind] [--limit N]

Embeds the chunks of one strategy of the default corpus with all-MiniLM-L6-v2 both ways (each
warmed up first, then timed on all the chunks) and prints seconds, chunks per second, the speed
ratio, and the smallest cosine between the two paths' vectors for the same chunk. The target:
ratio >= 2 at cosine >= 0.9999 (issue 14; 1.25 before). The one-off ONNX export (per weights revision) is timed apart.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

from rag_assets.lib.embed.models import BUILT_IN, load_model  # noqa: E402
from rag_assets.lib.embed.spec import package_folder  # noqa: E402
from rag_assets.lib.embed.vectors import l2_normalize  # noqa: E402
from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_document  # noqa: E402
from rag_assets.lib.ingest.corpus import scan_corpus  # noqa: E402
from rag_assets.lib.ingest.extraction import extract_document  # noqa: E402
from rag_assets.settings import DEFAULT_CORPUS_DIR  # noqa: E402


def chunk_texts(strategy: str) -> list[str]:
    texts = []
    for entry in scan_corpus(DEFAULT_CORPUS_DIR):
        doc = extract_document((DEFAULT_CORPUS_DIR / entry.path).read_bytes(), entry.format, entry.path)
        texts += [c.text for c in chunk_document(entry.path, doc.title, doc.text, doc.sections, STRATEGIES[strategy])]
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", default="blind", choices=sorted(STRATEGIES))
    parser.add_argument("--limit", type=int, default=0, help="embed only the first N chunks")
    args = parser.parse_args()
    texts = chunk_texts(args.strategy)
    texts = texts[: args.limit] if args.limit else texts
    mean_chars = sum(map(len, texts)) / len(texts)
    print(f"{len(texts)} chunks of strategy {args.strategy}, {mean_chars:.0f} characters on average, "
          f"{os.cpu_count()} CPUs")

    from sentence_transformers import SentenceTransformer

    plain = SentenceTransformer(str(package_folder(BUILT_IN["all-MiniLM-L6-v2"])), device="cpu")
    with tempfile.TemporaryDirectory() as onnx_dir:
        started = time.perf_counter()
        ours = load_model("all-MiniLM-L6-v2", onnx_dir=Path(onnx_dir))
        print(f"one-off: load, export and verify the ONNX graph: {time.perf_counter() - started:.1f} s "
              f"(runtime: {ours.runtime})")
        plain.encode(texts[:16])
        ours.embed(texts[:16])
        started = time.perf_counter()
        reference = plain.encode(texts)  # default settings
        plain_seconds = time.perf_counter() - started
        started = time.perf_counter()
        vectors = ours.embed(texts)
        our_seconds = time.perf_counter() - started
    cosine = (l2_normalize(reference) * vectors).sum(axis=1)
    print(f"plain SentenceTransformer.encode: {plain_seconds:6.1f} s  {len(texts) / plain_seconds:6.1f} chunks/s")
    print(f"rag_assets embedding path:        {our_seconds:6.1f} s  {len(texts) / our_seconds:6.1f} chunks/s")
    print(f"speed ratio {plain_seconds / our_seconds:.2f}x (target >= 2); cosine to plain: "
          f"min {cosine.min():.7f}, mean {cosine.mean():.7f} (target >= 0.9999)")
    print(f"RESULT ratio={plain_seconds / our_seconds:.2f} min_cosine={cosine.min():.7f} "
          f"{'PASS' if plain_seconds / our_seconds >= 2 and cosine.min() >= 0.9999 else 'FAIL'}")


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
