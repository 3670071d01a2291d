"""Exact against approximate dense search at 10k, 100k and 1M vectors: query time, recall, build time, memory.

    .venv/bin/python bench/scale.py [--sizes 10000 100000 1000000] [--queries 200] [--threads 2]

The vectors are synthetic, seeded unit vectors of dimension 384 (MiniLM's), drawn around 2,000 random
centres so that neighbourhoods exist, as in real embeddings; uniform random vectors in 384 dimensions
have almost no near neighbours and make any graph index look bad. The queries are other points of the
same mixture. Each size runs in its own process, so its peak memory is its own:

- ``exact``: ``dense_top_k`` (the `dense` retriever), one query at a time, as the retriever runs;
- ``ann``: the `ann` retriever's HNSW graph (faiss, ``HNSWConfig`` defaults) built on ``--threads``
  threads (the retriever builds single-threaded, for determinism), then queried one at a time;
- ``recall@10``: the share of the exact top 10 the graph returns.

Prints one line per size and the growth exponents of exact and approximate query time.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DIMENSION, CENTRES = 384, 2000


def mixture(rows: int, seed: int):
    import numpy as np

    generator = np.random.default_rng(seed)
    centres = np.random.default_rng(0).standard_normal((CENTRES, DIMENSION)).astype(np.float32)
    vectors = np.empty((rows, DIMENSION), np.float32)
    for start in range(0, rows, 100_000):  # in blocks: bounded temporary memory
        stop = min(rows, start + 100_000)
        chosen = centres[generator.integers(0, CENTRES, stop - start)]
        block = chosen + 0.6 * generator.standard_normal((stop - start, DIMENSION)).astype(np.float32)
        vectors[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return vectors


def _measure(rows: int, queries: int, threads: int) -> dict:
    import faiss

    from rag_assets.lib.retrievers.ann import HNSWIndex, recall_against_exact
    from rag_assets.lib.retrievers.dense import dense_top_k

    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    vectors, asked = mixture(rows, seed=1), mixture(queries, seed=2)
    exact, started = [], time.perf_counter()
    for query in asked:
        exact.append(dense_top_k(query, vectors, 10)[0][0].tolist())
    exact_ms = (time.perf_counter() - started) / queries * 1000
    after_exact = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    index = HNSWIndex(vectors, build_threads=threads)  # the retriever's index, built on more threads
    build_s = time.perf_counter() - started
    links = faiss.vector_to_array(index.index.hnsw.neighbors).nbytes  # the graph's edges
    index_mb = (links + index.index.ntotal * DIMENSION * 4) / 2**20  # and its own copy of the vectors
    found, started = [], time.perf_counter()
    for query in asked:
        found.append(index.search(query, 10)[0][0].tolist())
    ann_ms = (time.perf_counter() - started) / queries * 1000
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"rows": rows, "exact_ms": exact_ms, "ann_ms": ann_ms, "build_s": build_s,
            "recall_at_10": recall_against_exact(found, exact, 10), "vectors_mb": vectors.nbytes / 2**20,
            "exact_peak_mb": (after_exact - baseline) / 1024, "ann_peak_mb": (peak - baseline) / 1024,
            "index_mb": index_mb, "queries": queries}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_measure(args.one, args.queries, args.threads)))
        return 0
    results = []
    for rows in args.sizes:
        output = subprocess.run([sys.executable, __file__, "--one", str(rows), "--queries", str(args.queries),
                                 "--threads", str(args.threads)], check=True, capture_output=True, text=True).stdout
        result = json.loads(output.strip().splitlines()[-1])
        results.append(result)
        print(f"{rows:>9,} vectors ({result['vectors_mb']:.0f} MB): exact {result['exact_ms']:.2f} ms/query, "
              f"ann {result['ann_ms']:.3f} ms/query ({result['exact_ms'] / result['ann_ms']:.1f}x exact's speed), "
              f"recall@10 {result['recall_at_10']:.3f}, build {result['build_s']:.1f} s on {args.threads} threads, "
              f"index {result['index_mb']:.0f} MB (its vectors and edges), peak {result['ann_peak_mb']:.0f} MB", flush=True)
    if len(results) > 1:
        ratio = math.log(results[-1]["rows"] / results[0]["rows"])
        for key in ("exact_ms", "ann_ms", "build_s"):
            print(f"{key}: growth exponent {math.log(results[-1][key] / results[0][key]) / ratio:.2f} "
                  f"({results[0]['rows']:,} -> {results[-1]['rows']:,}; 1 = linear)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
