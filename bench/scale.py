"""Exact against approximate dense search at 10k, 100k and 1M vectors: query time, recall, build time,
memory; exact search streamed from Parquet in bounded blocks; embedding in process against
embedding through a local Ray and Dask cluster on the same cores (the engines' overhead); and the
memory of writing one embeddings partition (``--partition``: vectors streamed to Parquet).

    .venv/bin/python bench/scale.py [--sizes 10000 100000] [--queries 200] [--threads 2]
    .venv/bin/python bench/scale.py --streamed 1000000 --block-rows 65536 262144
    .venv/bin/python bench/scale.py --engines 1200 [--layout 1x2|2x1] [--rounds 3]
    .venv/bin/python bench/scale.py --partition 250000 1000000

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
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DIMENSION, CENTRES = 384, 2000


def status_kb(*names: str) -> list[int]:
    """Fields of /proc/self/status in kB (VmHWM, RssAnon, RssFile, ...)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return [int(fields[name].split()[0]) for name in names]


def peak_kb() -> int:
    """This process's peak resident memory in kB (VmHWM). Not ``ru_maxrss``: Linux carries that over
    from the parent at fork and through exec, so a child started by a parent holding 1.1 GB
    reported 1.1 GB before it had read anything."""
    return status_kb("VmHWM")[0]


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

    from rag_assets.lib.retrieve.ann import HNSWIndex, recall_against_exact
    from rag_assets.lib.retrieve.dense import dense_top_k

    baseline = peak_kb()
    vectors, asked = mixture(rows, seed=1), mixture(queries, seed=2)
    exact, started = [], time.perf_counter()
    for query in asked:
        exact.append(dense_top_k(query, vectors, 10)[0][0].tolist())
    exact_ms = (time.perf_counter() - started) / queries * 1000
    after_exact = peak_kb()
    started = time.perf_counter()
    index = HNSWIndex(vectors, build_threads=threads)  # the retriever's index, built on more threads
    build_s = time.perf_counter() - started
    links = faiss.vector_to_array(index.index.hnsw.neighbors).nbytes  # the graph's edges
    index_mb = (links + index.index.ntotal * DIMENSION * 4) / 2**20  # and its own copy of the vectors
    found, started = [], time.perf_counter()
    for query in asked:
        found.append(index.search(query, 10)[0][0].tolist())
    ann_ms = (time.perf_counter() - started) / queries * 1000
    peak = peak_kb()
    return {"rows": rows, "exact_ms": exact_ms, "ann_ms": ann_ms, "build_s": build_s,
            "recall_at_10": recall_against_exact(found, exact, 10), "vectors_mb": vectors.nbytes / 2**20,
            "exact_peak_mb": (after_exact - baseline) / 1024, "ann_peak_mb": (peak - baseline) / 1024,
            "index_mb": index_mb, "queries": queries}


def _streamed(rows: int, queries: int, block_rows: int, folder: Path) -> dict:
    """Exact top 10 of ``queries`` queries in one pass over ``rows`` vectors read from Parquet
    ``block_rows`` at a time (the file is written first, in blocks, by the parent)."""
    from rag_assets.lib.embed.partition import vector_blocks
    from rag_assets.lib.retrieve.dense import top_k_of_blocks

    baseline = peak_kb()
    asked = mixture(queries, seed=2)
    started = time.perf_counter()
    top_k_of_blocks(asked, vector_blocks(folder / f"vectors-{rows}.parquet", DIMENSION, block_rows), 10)
    seconds = time.perf_counter() - started
    return {"rows": rows, "block_rows": block_rows, "seconds": seconds, "queries": queries,
            "baseline_mb": baseline / 1024, "peak_mb": peak_kb() / 1024}


class _SeededEmbedder:
    """Seeded random unit vectors of dimension 384 for any texts, fast: the partition writer's cost
    without a model's. Quacks like an Embedder for ``write_embeddings``."""

    key, revision, dimension, normalized, window, special_tokens = "seeded", "seeded-1", DIMENSION, True, None, 2

    def __init__(self) -> None:
        import numpy as np

        self.generator = np.random.default_rng(3)

    def embed(self, texts):
        import numpy as np

        vectors = self.generator.standard_normal((len(texts), DIMENSION)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def count_tokens(self, texts):
        return [len(text) // 4 for text in texts]


def _memory_mb() -> tuple[float, float]:
    """(RssAnon, RssFile) of this process in MB: its own memory, and the file pages it maps (the
    scratch file's pages, which the kernel can write back and reclaim)."""
    anon, file = status_kb("RssAnon", "RssFile")
    return anon / 1024, file / 1024


def _partition(rows: int, folder: Path) -> dict:
    """Writes one embeddings partition of ``rows`` chunks through ``write_embeddings`` (the asset's
    path: an empty cache, shards of 64 embedded in process and cached, vectors to the scratch map,
    the file in row groups), sampling the process's memory at every shard."""
    import shutil

    import pyarrow as pa

    from rag_assets.lib.embed.partition import write_embeddings

    home = folder / f"partition-{rows}"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    texts = [f"chunk {i}: a synthetic text of about the length of a header and a sentence ({i * 7919 % 100003})"
             for i in range(rows)]
    chunks = pa.table({"chunk_id": [f"doc-{i // 50}.html#{i % 50}" for i in range(rows)], "text": texts,
                       "span_start": [0] * rows, "end": [len(text) for text in texts],
                       "extractor_version": ["x"] * rows, "snapshot_id": ["s"] * rows})
    del texts
    baseline = _memory_mb()
    peak = list(baseline)

    def sample(done, total):
        anon, file = _memory_mb()
        peak[0], peak[1] = max(peak[0], anon), max(peak[1], file)

    started = time.perf_counter()
    write_embeddings(home / "embeddings.parquet", chunks, _SeededEmbedder(), "synthetic", home, sample)
    seconds = time.perf_counter() - started
    sample(0, 0)
    shards = list((home / "embedding_cache").rglob("*.parquet"))
    result = {"rows": rows, "seconds": seconds, "vectors_mb": rows * DIMENSION * 4 / 2**20,
              "baseline_anon_mb": baseline[0], "peak_anon_mb": peak[0], "peak_file_mb": peak[1],
              "cache_shards": len(shards), "file_mb": (home / "embeddings.parquet").stat().st_size / 2**20,
              "peak_rss_mb": peak_kb() / 1024}
    shutil.rmtree(home, ignore_errors=True)
    return result


def write_vectors(rows: int, path: Path) -> None:
    """The seeded mixture as an embeddings-like Parquet file, written 100,000 rows at a time in row
    groups of 65,536 (Arrow decodes a row group at once: it bounds a streamed reader's memory)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.exists():
        return
    generator = np.random.default_rng(1)
    centres = np.random.default_rng(0).standard_normal((CENTRES, DIMENSION)).astype(np.float32)
    schema = pa.schema([("vector", pa.list_(pa.float32(), DIMENSION))])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, 100_000):
            count = min(rows, start + 100_000) - start
            block = centres[generator.integers(0, CENTRES, count)] + 0.6 * generator.standard_normal(
                (count, DIMENSION)).astype(np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            writer.write_table(pa.table({"vector": pa.FixedSizeListArray.from_arrays(pa.array(block.reshape(-1)),
                                                                                      DIMENSION)}, schema=schema),
                               row_group_size=65_536)


def corpus_texts(count: int) -> list[str]:
    """``count`` chunk texts of the default corpus (strategy ``boundaries``), repeated if need be."""
    from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_document
    from rag_assets.lib.ingest.corpus import scan_corpus
    from rag_assets.lib.ingest.extraction import extract_document
    from rag_assets.settings import DEFAULT_CORPUS_DIR

    texts = []
    for entry in scan_corpus(DEFAULT_CORPUS_DIR):
        doc = extract_document((DEFAULT_CORPUS_DIR / entry.path).read_bytes(), entry.format, entry.path)
        texts += [c.text for c in chunk_document(entry.path, doc.title, doc.text, doc.sections,
                                                 STRATEGIES["boundaries"])]
    return [f"{texts[i % len(texts)]}" + (f" ({i // len(texts)})" if i >= len(texts) else "") for i in range(count)]


def engine_passes(count: int) -> tuple[list[str], list[str]]:
    """Two passes of the same ``count // 2`` corpus texts: the short one once, the long one twice
    (each copy marked, so the cache embeds every text). The long pass is exactly twice the short
    one's work, so their difference is the marginal cost of ``count // 2`` texts, free of what a
    pass costs once (Ray Data starts a new actor pool, each loading the model, for every dataset)."""
    base = corpus_texts(count // 2)
    return [f"{text} [a]" for text in base], [f"{text} [{mark}]" for mark in "bc" for text in base]


def _engine(engine: str, count: int, folder: Path) -> dict:
    """Seconds to embed the two passes of ``engine_passes(count)`` with all-MiniLM-L6-v2 through
    ``engine`` (the `embeddings` asset's path: the cache, shards of 64, an empty cache each pass),
    the cluster already started and its workers warm."""
    import os
    import shutil

    from rag_assets.lib.embed.cache import EmbeddingCache, embed_with_cache
    from rag_assets.lib.embed.cluster import DaskEmbedding, RayEmbedding
    from rag_assets.lib.embed.models import load_model
    from rag_assets.lib.embed.partition import BATCH

    short, long = engine_passes(count)
    embedder = load_model("all-MiniLM-L6-v2")
    cluster, address = None, os.environ.get("BENCH_CLUSTER_ADDRESS", "")
    if engine == "ray":
        cluster = RayEmbedding(address, embedder, cpus_per_actor=int(os.environ["BENCH_THREADS"]))
    elif engine == "dask":
        cluster = DaskEmbedding(address, embedder, threads=int(os.environ["BENCH_THREADS"]))
    # before the clock: each worker loads the model and runs it on the passes' texts, marked apart (the
    # first batches at a new sequence length cost more: without this, the first pass paid 1.7 s more
    # in process), as a warm cluster has it
    warm = [f"{text} [w]" for text in short]
    if cluster is not None:
        list(cluster.embed_shards(warm))
    else:
        embedder.embed(warm)
    seconds, driver_cpu = {}, {}
    for name, texts in (("short", short), ("long", long)):
        shutil.rmtree(folder / engine, ignore_errors=True)  # an empty cache: every text is embedded
        started, cpu = time.perf_counter(), time.process_time()
        _, embedded, _ = embed_with_cache(texts, embedder.embed, EmbeddingCache(folder / engine, embedder.dimension),
                                          BATCH, embed_shards=cluster.embed_shards if cluster else None)
        seconds[name], driver_cpu[name] = time.perf_counter() - started, time.process_time() - cpu
        assert embedded == len(texts), f"{engine} embedded {embedded} of {len(texts)} texts"
    if cluster is not None:
        cluster.close()
    marginal = (len(long) - len(short)) / (seconds["long"] - seconds["short"])
    return {"engine": engine, "short_texts": len(short), "long_texts": len(long), "short_s": seconds["short"],
            "long_s": seconds["long"], "per_second": len(long) / seconds["long"], "marginal_per_second": marginal,
            "fixed_s": seconds["long"] - len(long) / marginal, "workers": cluster.workers if cluster else 1,
            "driver_cpu_s": driver_cpu["long"]}


ENGINES = ("in_process", "ray", "dask")


def _engine_run(engine: str, count: int, folder: Path, workers: int, threads: int) -> dict:
    """One engine's passes in a process of their own, its cluster started before and stopped after."""
    import os

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    stop = None
    if engine == "ray":  # the tests' Ray head: `ray start --head` in its own session
        from rag_assets_tests.servers import RayHead

        head = RayHead(cpus=workers * threads)
        env |= {"BENCH_CLUSTER_ADDRESS": head.address, "BENCH_THREADS": str(threads), **head.client_env}
        stop = head.stop
    elif engine == "dask":  # the tests' Dask cluster, which gives this process's environment back when stopped
        from rag_assets_tests.servers import DaskCluster

        local = DaskCluster(workers, {"OMP_NUM_THREADS": str(threads), "HF_HUB_OFFLINE": "1"})
        env |= {"BENCH_CLUSTER_ADDRESS": local.address, "BENCH_THREADS": str(threads)}
        stop = local.stop
    try:
        done = subprocess.run([sys.executable, __file__, "--engine-one", engine, "--engines", str(count),
                               "--folder", str(folder)], capture_output=True, text=True, env=env)
        if done.returncode:
            raise SystemExit(f"{engine} failed:\n{done.stderr[-3000:]}")
    finally:
        if stop:
            stop()
    return json.loads(done.stdout.strip().splitlines()[-1])


def engines(count: int, folder: Path, workers: int, threads: int, rounds: int) -> list[dict]:
    """In process (the model's threads on every core), then through a local Ray head and a Dask
    LocalCluster of ``workers`` workers whose model runs on ``threads`` threads each (workers x threads
    = the cores: 1 x 2 isolates the engine's own cost, 2 x 1 is one model per core).

    ``rounds`` rounds, the engines' order rotated each round (in process first, then second, ...),
    so that a machine getting slower or faster during the run favours none of them; the ratios are
    of medians over the rounds. Each run is two passes (see ``engine_passes``): the marginal
    throughput (texts per second once a pass is going) and the fixed seconds a pass costs besides."""
    import statistics

    results: dict[str, list[dict]] = {engine: [] for engine in ENGINES}
    for round_number in range(rounds):
        order = ENGINES[round_number % len(ENGINES):] + ENGINES[:round_number % len(ENGINES)]
        for engine in order:
            result = _engine_run(engine, count, folder, workers, threads)
            results[engine].append(result)
            print(f"round {round_number + 1} {engine:>10}: marginal {result['marginal_per_second']:.1f} texts/s, "
                  f"fixed {result['fixed_s']:.1f} s a pass; {result['long_texts']} texts in {result['long_s']:.1f} s "
                  f"({result['per_second']:.1f} texts/s), {result['short_texts']} in {result['short_s']:.1f} s; "
                  f"{result['workers']} workers; the driver's CPU {result['driver_cpu_s']:.1f} s in the long pass",
                  flush=True)
    median = {engine: {key: statistics.median(run[key] for run in runs)
                       for key in ("marginal_per_second", "per_second", "fixed_s")} for engine, runs in results.items()}
    base = median["in_process"]
    print(f"layout {workers}x{threads}, {rounds} rounds, medians:")
    for engine in ENGINES:
        figures = median[engine]
        print(f"{engine:>10}: marginal {figures['marginal_per_second']:.1f} texts/s "
              f"({figures['marginal_per_second'] / base['marginal_per_second']:.2f}x in process), "
              f"{2 * (count // 2)} texts end to end {figures['per_second']:.1f} texts/s "
              f"({figures['per_second'] / base['per_second']:.2f}x), fixed {figures['fixed_s']:.1f} s a pass")
    for engine in ENGINES[1:]:
        overhead = 1 - median[engine]["marginal_per_second"] / base["marginal_per_second"]
        print(f"{engine} overhead on throughput: {100 * overhead:.0f} % (target under 15 %: "
              f"{'met' if overhead < 0.15 else 'not met'})")
    return [run for runs in results.values() for run in runs]


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: the clusters are stopped too (finally)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--streamed", type=int, nargs="+", help="rows: exact search streamed from Parquet")
    parser.add_argument("--block-rows", type=int, nargs="+", default=[65_536])
    parser.add_argument("--engines", type=int, help="texts: embedding in process, on Ray, on Dask")
    parser.add_argument("--layout", default="1x2", help="cluster workers x model threads each (1x2, 2x1)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the engines, their order rotated")
    parser.add_argument("--folder", type=Path, default=ROOT / "storage" / "bench-scale")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--streamed-one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--engine-one", help=argparse.SUPPRESS)
    parser.add_argument("--partition", type=int, nargs="+", help="rows: one embeddings partition written streamed")
    parser.add_argument("--partition-one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_measure(args.one, args.queries, args.threads)))
        return 0
    if args.streamed_one:
        print(json.dumps(_streamed(args.streamed_one, args.queries, args.block_rows[0], args.folder)))
        return 0
    if args.engine_one:
        print(json.dumps(_engine(args.engine_one, args.engines, args.folder)))
        return 0
    if args.partition_one:
        print(json.dumps(_partition(args.partition_one, args.folder)))
        return 0
    args.folder.mkdir(parents=True, exist_ok=True)
    if args.partition:
        for rows in args.partition:
            output = subprocess.run([sys.executable, __file__, "--partition-one", str(rows), "--folder",
                                     str(args.folder)], check=True, capture_output=True, text=True).stdout
            result = json.loads(output.strip().splitlines()[-1])
            print(f"{rows:>9,} chunks: one embeddings partition ({result['vectors_mb']:.0f} MB of vectors, file "
                  f"{result['file_mb']:.0f} MB) in {result['seconds']:.1f} s; the process's own memory "
                  f"{result['baseline_anon_mb']:.0f} MB with the chunks loaded, peak {result['peak_anon_mb']:.0f} MB "
                  f"(+{result['peak_anon_mb'] - result['baseline_anon_mb']:.0f}); mapped file pages at most "
                  f"{result['peak_file_mb']:.0f} MB (reclaimable); peak RSS {result['peak_rss_mb']:.0f} MB; "
                  f"{result['cache_shards']} cache shards", flush=True)
        return 0
    if args.engines:
        workers, threads = (int(part) for part in args.layout.split("x"))
        engines(args.engines, args.folder, workers, threads, args.rounds)
        return 0
    if args.streamed:
        for rows in args.streamed:
            write_vectors(rows, args.folder / f"vectors-{rows}.parquet")
            for block_rows in args.block_rows:
                output = subprocess.run([sys.executable, __file__, "--streamed-one", str(rows), "--queries",
                                         str(args.queries), "--block-rows", str(block_rows), "--folder",
                                         str(args.folder)], check=True, capture_output=True, text=True).stdout
                result = json.loads(output.strip().splitlines()[-1])
                print(f"{rows:>9,} vectors ({rows * DIMENSION * 4 / 2**20:.0f} MB) streamed from Parquet in blocks of "
                      f"{block_rows:,}: {result['queries']} queries in one pass, {result['seconds']:.1f} s "
                      f"({1000 * result['seconds'] / result['queries']:.1f} ms/query), peak RSS "
                      f"{result['peak_mb']:.0f} MB (the interpreter with its imports: {result['baseline_mb']:.0f} MB)",
                      flush=True)
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
