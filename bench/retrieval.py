"""Retrieval speed, in one run: our BM25 against rank_bm25, and the dense scan single vs batched.

    .venv/bin/pip install -e '.[bench]' && .venv/bin/python bench/retrieval.py [--strategy boundaries]

Uses the chunks of one strategy of the default corpus (about 1,000) and the 172 needle questions
of the default evaluation set. Prints milliseconds per query and the ratios; targets: our BM25 at
least 10x faster than rank_bm25, the dense scan under 1 ms per query, and a batch of queries
costing less per query than one at a time (sub-linear). The reranker's cost and gain come from
the stored retrieval rows: run `make demo` first for that part.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rag_assets.lib.embed.vectors import l2_normalize
from rag_assets.lib.evalsets.queries import expand_queries, load_needles
from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_document
from rag_assets.lib.ingest.corpus import scan_corpus
from rag_assets.lib.ingest.extraction import extract_document
from rag_assets.lib.retrieve.bm25 import BM25, tokenize
from rag_assets.lib.retrieve.dense import dense_top_k
from rag_assets.lib.store.paths import duckdb_path  # noqa: E402
from rag_assets.settings import (  # noqa: E402
    DEFAULT_CORPUS_DIR,
    DEFAULT_EVAL_SET,
    current,  # noqa: E402
)


def best_of(repeats: int, function) -> float:
    """The fastest of several runs, in seconds: the least disturbed by the machine."""
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        timings.append(time.perf_counter() - started)
    return min(timings)


def bm25s_against_ours(texts: list[str], queries: list[str], ours: BM25) -> None:
    """bm25s (the kept library) beside ours on the same tokens and parameters (k1 1.2, b 0.75, the
    Lucene idf both use): indexing, one query per call, all queries in one call; and whether the top
    25 agree."""
    import bm25s

    def index():
        model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        model.index([tokenize(t) for t in texts], show_progress=False)
        return model

    peer = index()
    index_peer = best_of(3, index)
    index_ours = best_of(3, lambda: BM25(texts))
    tokenized = [tokenize(q) for q in queries]
    one_peer = best_of(3, lambda: [peer.retrieve([q], k=25, show_progress=False, n_threads=1) for q in tokenized])
    one_ours = best_of(3, lambda: [ours.top_k(q, 25) for q in queries])
    batch_peer = best_of(3, lambda: peer.retrieve(tokenized, k=25, show_progress=False, n_threads=1))
    same = 0
    for query, tokens in zip(queries, tokenized):
        [ids], [scores] = peer.retrieve([tokens], k=25, show_progress=False, n_threads=1)
        mine, _ = ours.top_k(query, 25)
        positive = [int(i) for i, score in zip(ids, scores) if score > 0]
        same += positive == mine[: len(positive)]
    n = len(queries)
    print(f"BM25 beside bm25s (same tokens, k1 1.2, b 0.75): indexing bm25s {index_peer:.3f} s, ours "
          f"{index_ours:.3f} s ({index_ours / index_peer:.2f}x bm25s' time); one query per call bm25s "
          f"{one_peer / n * 1e3:.3f} ms, ours {one_ours / n * 1e3:.3f} ms ({one_peer / one_ours:.2f}x faster); "
          f"all {n} in one call bm25s {batch_peer / n * 1e3:.3f} ms per query ({batch_peer / one_ours:.2f}x ours "
          f"one by one); the same top 25 for {same} of {n} queries")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", default="boundaries", choices=sorted(STRATEGIES))
    args = parser.parse_args()
    texts = []
    for entry in scan_corpus(DEFAULT_CORPUS_DIR):
        doc = extract_document((DEFAULT_CORPUS_DIR / entry.path).read_bytes(), entry.format, entry.path)
        texts += [c.text for c in chunk_document(entry.path, doc.title, doc.text, doc.sections, STRATEGIES[args.strategy])]
    queries = [q.text for q in expand_queries(load_needles(DEFAULT_EVAL_SET))]
    print(f"{len(texts)} chunks ({args.strategy}), {len(queries)} queries")

    from rank_bm25 import BM25Okapi

    ours = BM25(texts)
    peer = BM25Okapi([tokenize(t) for t in texts], k1=1.2, b=0.75)
    ours_s = best_of(3, lambda: [ours.top_k(q, 25) for q in queries]) / len(queries)
    peer_s = best_of(3, lambda: [np.argsort(-peer.get_scores(tokenize(q)))[:25] for q in queries]) / len(queries)
    print(f"BM25 per query (tokenise, score, top 25): rank_bm25 {peer_s * 1e3:.3f} ms, ours {ours_s * 1e3:.4f} ms: "
          f"{peer_s / ours_s:.1f}x faster (target >= 10x)")
    bm25s_against_ours(texts, queries, ours)

    rng = np.random.default_rng(0)
    for n_chunks in (1000, 10000):
        chunks = l2_normalize(rng.normal(size=(n_chunks, 384)).astype(np.float32))
        batch = l2_normalize(rng.normal(size=(len(queries), 384)).astype(np.float32))
        single = best_of(3, lambda: [dense_top_k(batch[i:i + 1], chunks, 25) for i in range(len(batch))]) / len(batch)
        batched = best_of(3, lambda: dense_top_k(batch, chunks, 25)) / len(batch)
        print(f"dense scan at {n_chunks} chunks x 384: {single * 1e3:.3f} ms per query one at a time, "
              f"{batched * 1e3:.3f} ms per query in a batch of {len(batch)} ({single / batched:.1f}x less)")

    database = duckdb_path(current().home)
    if not database.exists():
        print(f"no stored runs at {database}: run `make demo` for the reranker's cost and gain")
        return
    import duckdb

    with duckdb.connect(str(database), read_only=True) as connection:
        rows = connection.sql(
            "SELECT model, strategy, retriever, count(*) AS queries, "
            "count_if(hit_rank <= 1) / count(*) AS r1, avg(coalesce(1.0 / hit_rank, 0)) AS mrr, "
            "median(latency_ms) AS median_ms "
            "FROM retrieval_results WHERE query_kind <> 'out_of_domain' AND strategy = ? "
            "GROUP BY ALL ORDER BY model, retriever", params=[args.strategy]).fetchall()
    print("retriever cost and gain from the stored runs (strategy "
          f"{args.strategy}; latency = whole pipeline, query embedding included):")
    for model, strategy, retriever, count, r1, mrr, median in rows:
        print(f"  {model:24} {retriever:17} R@1 {r1:.3f}  MRR {mrr:.3f}  median {median:8.2f} ms per query")


if __name__ == "__main__":
    main()
