"""What asking a team's retriever costs per query, against our in-process dense search over the same
chunks and vectors, and how the HTTP path's throughput grows with requests in flight.

    python bench/external.py

The 30-page fixture corpus (rag_assets_tests/fixtures/small_corpus), chunked by ``boundaries`` and
embedded with wordllama; its evaluation questions asked of: our dense search (numpy, in process), the
HTTP service of the tests (uvicorn on loopback, ranking the same corpus's paragraphs by shared words in
Python: its time is the HTTP path's and that ranking's), a Chroma server and a LanceDB table holding the same chunks and vectors. Median
milliseconds per query and the ratio to dense, in one run; then the HTTP service's queries per second
with 1, 4 and 16 requests in flight.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.lib.embed.models import load_model  # noqa: E402
from rag_assets.lib.evalsets.loading import load_eval_set  # noqa: E402
from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_rows  # noqa: E402
from rag_assets.lib.ingest.corpus import scan_corpus  # noqa: E402
from rag_assets.lib.ingest.documents import extract_file  # noqa: E402
from rag_assets.lib.retrieve.external import ask_all, asker, spec_from  # noqa: E402
from rag_assets_tests.servers import ChromaServer, RetrievalService  # noqa: E402

FIXTURES = PROJECT / "rag_assets_tests" / "fixtures"
CORPUS, K = FIXTURES / "small_corpus", 10


def median_ms(ask, questions: list[str]) -> float:
    times = []
    for question in questions:
        started = time.perf_counter()
        ask(question, K)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> int:
    rows = [extract_file(CORPUS, e.path, e.format, e.sha256, 10**7) | {"snapshot_id": "s", "extractor_version": "2"}
            for e in scan_corpus(CORPUS, {})]
    chunks = chunk_rows(rows, STRATEGIES["boundaries"])
    model = load_model("wordllama")
    vectors = model.embed([c["text"] for c in chunks])
    questions = [r["question"] for r in load_eval_set(FIXTURES / "small_needles.jsonl").rows] * 3

    def dense(question: str, k: int):
        scores = vectors @ model.embed_queries([question])[0]
        return np.argsort(-scores)[:k]

    results = {"dense (in process)": median_ms(dense, questions)}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        service = RetrievalService(folder / "uvicorn.log", corpus=CORPUS)
        chroma = ChromaServer(folder)
        try:
            token = {"BENCH_TOKEN": f"Bearer {service.token}"}  # what the caller reads from the environment
            http = spec_from({"key": "http", "kind": "http", "url": f"{service.url}/search",
                              "headers": {"Authorization": "BENCH_TOKEN"}})
            results["http (uvicorn, loopback)"] = median_ms(asker(http, environ=token), questions)
            import chromadb
            import lancedb

            collection = chromadb.HttpClient(host="127.0.0.1", port=chroma.port).create_collection(
                "bench", metadata={"hnsw:space": "cosine"})
            collection.add(ids=[c["chunk_id"] for c in chunks], embeddings=vectors.tolist(),
                           documents=[c["content"] for c in chunks], metadatas=[{"doc_id": c["doc_id"]} for c in chunks])
            spec = spec_from({"key": "chroma", "kind": "chroma", "host": "127.0.0.1", "port": chroma.port,
                              "collection": "bench", "model": "wordllama"})
            results["chroma (server, loopback)"] = median_ms(asker(spec, model.embed_queries), questions)
            lancedb.connect(str(folder / "lance")).create_table(
                "bench", data=[{"vector": v.tolist(), "text": c["content"], "doc_id": c["doc_id"]}
                               for c, v in zip(chunks, vectors)])
            spec = spec_from({"key": "lance", "kind": "lancedb", "uri": str(folder / "lance"), "table": "bench",
                              "model": "wordllama"})
            results["lancedb (table, in process)"] = median_ms(asker(spec, model.embed_queries), questions)
            throughput = {}
            ask = asker(http, environ=token)
            many = [(str(i), q) for i, q in enumerate(questions * 4)]
            for in_flight in (1, 4, 16):
                started = time.perf_counter()
                ask_all(ask, many, K, in_flight)
                throughput[in_flight] = len(many) / (time.perf_counter() - started)
        finally:
            chroma.stop()
            service.stop()
    print(f"{len(chunks)} chunks, {len(questions)} queries, k={K}\n")
    print("| path | median ms per query | ratio to dense |\n|---|---|---|")
    for name, ms in results.items():
        print(f"| {name} | {ms:.2f} | {ms / results['dense (in process)']:.1f} |")
    print("\n| requests in flight (HTTP) | queries per second | ratio to 1 |\n|---|---|---|")
    for in_flight, rate in throughput.items():
        print(f"| {in_flight} | {rate:.0f} | {rate / throughput[1]:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
