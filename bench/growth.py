"""How cost grows with the corpus: each stage at 1x, 4x and 16x the default corpus, with time and
peak memory, in one run.

    .venv/bin/python bench/growth.py [--sizes 1 4 16] [--model paraphrase-MiniLM-L3-v2] [--home HOME]

A corpus of size Nx is N copies of the default corpus, each in its own folder (so every document id
is distinct). Each stage runs in its own process, so its peak memory (ru_maxrss, less the peak of a
process that only imports the same modules) is its own, its input included:

- ``extract``: scan the folder and extract every document;
- ``chunk``: chunk every document with strategy ``boundaries_header``;
- ``embed``: embed every chunk with ``--model`` (no cache; all-MiniLM-L6-v2 costs about 2.5x more);
- ``bm25_index`` / ``bm25_query``: build the BM25 index, then rank every query of the evaluation set;
- ``dense_scan``: exact cosine top 25 of those queries over every chunk vector, in one batch;
- ``metrics``: the DuckDB measures over N copies of a stored run's rows (``--home``, the storage
  folder of a `rag-assets evaluate`; skipped without one): its cost grows with the queries and
  configurations evaluated, not with the corpus, so it is scaled by queries.

Prints one table (seconds and MB per stage and size) and, per stage, the growth exponent between
the smallest and the largest size (1 = linear).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

STAGES = ("extract", "chunk", "embed", "bm25_index", "bm25_query", "dense_scan", "metrics")
STRATEGY = "boundaries_header"


def build_corpus(size: int, folder: Path) -> Path:
    from rag_assets.settings import DEFAULT_CORPUS_DIR

    corpus = folder / f"corpus_{size}x"
    if not corpus.is_dir():
        for copy in range(size):
            shutil.copytree(DEFAULT_CORPUS_DIR, corpus / f"copy_{copy:02d}")
    return corpus


def stage(name: str, work: Path, corpus: Path, model: str, home: str, size: int) -> dict:
    """Runs one stage in this process; returns its figures (seconds and counts)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rag_assets.lib.evalsets.queries import expand_queries, load_needles
    from rag_assets.lib.ingest.canonical import Section
    from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_document
    from rag_assets.lib.ingest.corpus import scan_corpus
    from rag_assets.lib.ingest.extraction import extract_document
    from rag_assets.settings import DEFAULT_EVAL_SET

    queries = [q.text for q in expand_queries(load_needles(DEFAULT_EVAL_SET))]
    started = time.perf_counter()
    if name == "extract":
        rows = []
        for entry in scan_corpus(corpus):
            doc = extract_document((corpus / entry.path).read_bytes(), entry.format, entry.path)
            sections = json.dumps([dataclasses.astuple(section) for section in doc.sections])
            rows.append({"path": entry.path, "title": doc.title, "text": doc.text, "sections": sections})
        seconds = time.perf_counter() - started
        pq.write_table(pa.Table.from_pylist(rows), work / "documents.parquet")
        return {"seconds": seconds, "items": len(rows), "characters": sum(len(r["text"]) for r in rows)}
    if name == "chunk":
        documents = pq.read_table(work / "documents.parquet").to_pylist()
        started = time.perf_counter()
        texts = [c.text for d in documents for c in chunk_document(
            d["path"], d["title"], d["text"], [Section(*s) for s in json.loads(d["sections"])], STRATEGIES[STRATEGY])]
        seconds = time.perf_counter() - started
        pq.write_table(pa.table({"text": texts}), work / "chunks.parquet")
        return {"seconds": seconds, "items": len(texts)}
    texts = pq.read_table(work / "chunks.parquet").column("text").to_pylist()
    if name == "embed":
        from rag_assets.lib.embed.models import load_model

        embedder = load_model(model, onnx_dir=work.parent / "onnx")
        embedder.embed(texts[:8])
        started = time.perf_counter()
        vectors = embedder.embed(texts)
        seconds = time.perf_counter() - started
        np.save(work / "vectors.npy", vectors)
        np.save(work / "queries.npy", embedder.embed_queries(queries))
        return {"seconds": seconds, "items": len(texts)}
    if name in ("bm25_index", "bm25_query"):
        from rag_assets.lib.retrieve.bm25 import BM25

        index = BM25(texts)
        built = time.perf_counter() - started
        if name == "bm25_index":
            return {"seconds": built, "items": len(texts)}
        started = time.perf_counter()
        for query in queries:
            index.top_k(query, 25)
        return {"seconds": time.perf_counter() - started, "items": len(queries)}
    if name == "dense_scan":
        from rag_assets.lib.retrieve.dense import dense_top_k

        vectors, query_vectors = np.load(work / "vectors.npy"), np.load(work / "queries.npy")
        started = time.perf_counter()
        dense_top_k(query_vectors, vectors, 25)
        return {"seconds": time.perf_counter() - started, "items": len(vectors)}
    if name == "metrics":
        return metrics_stage(Path(home), size)
    raise ValueError(name)


def metrics_stage(home: Path, size: int) -> dict:
    """The measures of every configuration over ``size`` copies of the newest stored run's rows."""
    import duckdb
    import pyarrow as pa

    from rag_assets.lib.evaluate.measures import (
        comparison,
        create_schema,
        write_results,
    )
    from rag_assets.lib.store.paths import duckdb_path

    with duckdb.connect(str(duckdb_path(home)), read_only=True) as stored:
        rows = stored.sql("SELECT * EXCLUDE (run_id) FROM latest_results").to_arrow_table()
    copies = []
    for copy in range(size):
        ids = pa.array([f"{q}#{copy}" for q in rows.column("query_id").to_pylist()])
        copies.append(rows.set_column(rows.schema.get_field_index("query_id"), "query_id", ids))
    table = pa.concat_tables(copies)
    with duckdb.connect() as connection:
        started = time.perf_counter()
        create_schema(connection)
        write_results(connection, table)
        measures = comparison(connection)
        return {"seconds": time.perf_counter() - started, "items": table.num_rows, "configurations": len(measures)}


def run_stage(name: str, work: Path, corpus: Path, model: str, home: str, size: int) -> dict:
    """One stage in a fresh process: its figures and its peak memory in MB."""
    command = [sys.executable, __file__, "--stage", name, "--work", str(work), "--corpus", str(corpus),
               "--model", model, "--home", home, "--sizes", str(size)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"stage {name} at {size}x failed (exit {os.waitstatus_to_exitcode(status)})")
    return json.loads(output.strip().splitlines()[-1]) | {"peak_mb": usage.ru_maxrss / 1e3}


def baseline_mb() -> float:
    """Peak memory of a process that imports what the stages import (the model is not loaded: the
    embed stage's figure includes the model)."""
    code = ("import sys; sys.path.insert(0, %r); import numpy, pyarrow.parquet, duckdb; "
            "from rag_assets.lib import chunking, extraction, metrics; "
            "from rag_assets.lib.retrievers import bm25, dense; "
            "from rag_assets.lib import embedding, evalset, corpus, paths") % (str(ROOT),)
    process = subprocess.Popen([sys.executable, "-c", code])
    _, _, usage = os.wait4(process.pid, 0)
    return usage.ru_maxrss / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--model", default="paraphrase-MiniLM-L3-v2")
    parser.add_argument("--home", default=os.environ.get("RAG_ASSETS_HOME", ""),
                        help="a storage folder after `rag-assets evaluate`, for the metrics stage")
    parser.add_argument("--stage", choices=STAGES, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:
        print(json.dumps(stage(args.stage, args.work, args.corpus, args.model, args.home, args.sizes[0])))
        return
    stages = [s for s in STAGES if s != "metrics" or (args.home and Path(args.home).is_dir())]
    base = baseline_mb()
    print(f"{os.cpu_count()} CPUs; model {args.model}; strategy {STRATEGY}; a process that only imports "
          f"peaks at {base:.0f} MB (subtracted below)", flush=True)
    results: dict[tuple[str, int], dict] = {}
    with tempfile.TemporaryDirectory(prefix="rag_growth_") as folder:
        for size in args.sizes:
            corpus = build_corpus(size, Path(folder))
            work = Path(folder) / f"work_{size}x"
            work.mkdir()
            for name in stages:
                results[name, size] = figures = run_stage(name, work, corpus, args.model, args.home, size)
                print(f"{size:3d}x {name:11s} {figures['seconds']:9.2f} s  {figures['peak_mb'] - base:8.0f} MB  "
                      f"{figures['items']} items", flush=True)
    small, large = min(args.sizes), max(args.sizes)
    print(f"\n{'stage':11s} " + " ".join(f"{f'{s}x s':>9s} {f'{s}x MB':>8s}" for s in args.sizes)
          + f" {'time exponent':>14s} {'memory exponent':>16s}")
    for name in stages:
        cells = " ".join(f"{results[name, s]['seconds']:9.2f} {results[name, s]['peak_mb'] - base:8.0f}"
                         for s in args.sizes)
        exponent = _exponent(results[name, small]["seconds"], results[name, large]["seconds"], small, large)
        memory = _exponent(max(results[name, small]["peak_mb"] - base, 1),
                           max(results[name, large]["peak_mb"] - base, 1), small, large)
        print(f"{name:11s} {cells} {exponent:14.2f} {memory:16.2f}")
    print(f"(exponent: log(cost at {large}x / cost at {small}x) / log({large}/{small}); 1 is linear)")


def _exponent(small_cost: float, large_cost: float, small: int, large: int) -> float:
    if large == small or small_cost <= 0:
        return float("nan")
    return math.log(large_cost / small_cost) / math.log(large / small)


if __name__ == "__main__":
    main()
