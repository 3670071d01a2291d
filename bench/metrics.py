"""Our metrics (DuckDB SQL over the stored rows) against ranx on the same rows: equal values to 1e-9,
and the time each takes, in one run.

    .venv/bin/pip install -e '.[bench]' && RAG_ASSETS_HOME=<home after evaluate> .venv/bin/python bench/metrics.py

For every configuration of the newest run, the TREC view of its rows (``rag_assets.lib.trec``:
needle queries by chunk, holders the list did not reach as placeholders) is handed to ranx, which
computes hit_rate@k (success@k), mrr and ndcg@10; ours are the ``comparison`` table's. Prints the
largest difference and both times (ours: one SQL GROUP BY over every configuration; ranx: one
evaluate call per configuration, its compiled kernels warmed first). For needle evaluation sets
(the default corpus); a BEIR home's document queries need the chunk-to-document map that
`rag-assets export --format trec` writes, which ranx reads as it is.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import duckdb

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.lib.evaluate.measures import comparison  # noqa: E402
from rag_assets.lib.evaluate.trec import stored_rows, trec_lines  # noqa: E402
from rag_assets.lib.store.paths import duckdb_path  # noqa: E402
from rag_assets.settings import current  # noqa: E402

MEASURES = {"success_at_1": "hit_rate@1", "success_at_4": "hit_rate@4", "success_at_8": "hit_rate@8",
            "success_at_20": "hit_rate@20", "mrr": "mrr", "ndcg_at_10": "ndcg@10"}


def to_ranx(run_lines: list[str], qrels_lines: list[str]):
    from ranx import Qrels, Run

    qrels, run = {}, {}
    for line in qrels_lines:
        query, _, item, grade = line.split()
        qrels.setdefault(query, {})[item] = int(grade)
    for line in run_lines:
        query, _, item, _, score, _ = line.split()
        run.setdefault(query, {})[item] = float(score)
    for query in qrels:
        run.setdefault(query, {})
    return Qrels(qrels), Run(run)


def main() -> int:
    from ranx import evaluate

    database = duckdb_path(current().home)
    with duckdb.connect(str(database), read_only=True) as connection:
        started = time.perf_counter()
        ours = {(r["model"], r["strategy"], r["retriever"]): r for r in comparison(connection).to_pylist()}
        ours_seconds = time.perf_counter() - started
        rows = {configuration: stored_rows(connection, *configuration) for configuration in ours}
    inputs = {c: to_ranx(*trec_lines(rows[c], {}, {}, "x")) for c in ours}
    evaluate(*next(iter(inputs.values())), list(MEASURES.values()))  # compile ranx's kernels once
    started = time.perf_counter()
    theirs = {c: evaluate(qrels, run, list(MEASURES.values())) for c, (qrels, run) in inputs.items()}
    ranx_seconds = time.perf_counter() - started
    largest = max(abs(ours[c][column] - theirs[c][measure]) for c in ours for column, measure in MEASURES.items())
    print(f"{len(ours)} configurations, {sum(len(r) for r in rows.values())} judged rows")
    print(f"largest difference over {len(MEASURES)} measures: {largest:.2e} (target <= 1e-9)")
    print(f"ours (one DuckDB GROUP BY, every configuration, intervals included): {ours_seconds * 1e3:.1f} ms; "
          f"ranx (one evaluate per configuration, no intervals): {ranx_seconds * 1e3:.1f} ms")
    return 0 if largest <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
