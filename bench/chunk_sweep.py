"""Chunk size and overlap against the splitter, at an equal context budget (BENCHMARKS.md, "Chunk size, overlap
and the splitter").

Runs `rag-assets evaluate` on one corpus with a strategies file of our boundary strategy swept over 4 sizes x 2
overlaps and LangChain's RecursiveCharacterTextSplitter at the same sizes and overlaps (tokens: cl100k_base),
all-MiniLM-L6-v2 only, into an empty storage folder, then prints from its metrics.duckdb, for one retriever:
every point's success within the budget and at k = 4 and 8 with 95 % intervals, the pick, the best of each
family and the Holm-adjusted paired test of the pick against the best of the other family, and whether size
and overlap move success more than the splitter does (the spread within each family against the mean gap
between the families at the same size and overlap).

    .venv/bin/python bench/chunk_sweep.py --home /tmp/sweep/default
    .venv/bin/python bench/chunk_sweep.py --home /tmp/sweep/starlette --corpus data/third_party/doc_trees/starlette \\
        --eval-set data/eval/starlette.needles.jsonl --out-of-domain data/eval/starlette.out_of_domain.jsonl
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb

PROJECT = Path(__file__).resolve().parents[1]
SIZES = [128, 256, 512, 1024]
OVERLAPS = [0, 0.25]
STRATEGIES = f"""
[[strategy]]
name = "ours"
unit = "tokens"
size = {SIZES}
overlap = {OVERLAPS}

[[strategy]]
name = "lc"
kind = "langchain"
splitter = "RecursiveCharacterTextSplitter"
unit = "tokens"
size = {SIZES}
overlap = {OVERLAPS}
"""
MODEL = "all-MiniLM-L6-v2"


def names() -> list[str]:
    return [f"{family}-{size}t-o{round(size * overlap)}" for family in ("ours", "lc") for size in SIZES
            for overlap in OVERLAPS]


def evaluate(home: Path, corpus: str | None, eval_set: str | None, out_of_domain: str | None) -> float:
    home.mkdir(parents=True, exist_ok=True)
    strategies = home.parent / f"{home.name}.strategies.toml"
    strategies.write_text(STRATEGIES, encoding="utf-8")
    env = {**os.environ, "RAG_ASSETS_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"),
           "RAG_ASSETS_STRATEGIES_FILE": str(strategies), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", MODEL, "--strategies", *names()]
    for option, value in (("--corpus", corpus), ("--eval-set", eval_set), ("--out-of-domain", out_of_domain)):
        if value:
            command += [option, value]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=PROJECT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"rag-assets evaluate failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return time.perf_counter() - started


def figure(row: dict, name: str) -> str:
    return f"{row[name]:.3f} [{row[name + '_low']:.2f}, {row[name + '_high']:.2f}]"


def report(home: Path, retriever: str, seconds: float | None) -> None:
    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        [(budget, pick_model, pick_strategy, pick_retriever)] = connection.sql(
            "SELECT budget, model, strategy, retriever FROM decision").fetchall()
        rows = connection.sql("SELECT * FROM size_view WHERE model = ? AND retriever = ? ORDER BY family, size, overlap",
                              params=[MODEL, retriever]).to_arrow_table().to_pylist()
        tests = connection.sql("SELECT b_model, b_strategy, b_retriever, a_value, b_value, wins, losses, p_adjusted "
                               "FROM comparisons WHERE family = 'verdict'").to_arrow_table().to_pylist()
    print(f"{home}: {len(names())} strategies x {MODEL}" + (f", evaluate {seconds:.0f} s" if seconds else ""))
    print(f"pick at {budget} tokens: {pick_model}: {pick_strategy} x {pick_retriever}")
    print(f"\nretriever {retriever}: family | size | overlap | S@{budget}t | S@4 | S@8 | tokens embedded")
    for row in rows:
        print(f"| {row['family']} | {row['size']} | {row['overlap']} | {figure(row, 'success')} | "
              f"{figure(row, 'success_at_4')} | {figure(row, 'success_at_8')} | {row['tokens_embedded']:,} |")
    best = {}
    for row in rows:
        if row["family"] not in best or row["success"] > best[row["family"]]["success"]:
            best[row["family"]] = row
    for family, row in best.items():
        print(f"best {family} ({retriever}): {row['strategy']} S@{budget}t {figure(row, 'success')}")
    by_point = {(row["family"], row["size"], row["overlap"]): row["success"] for row in rows}
    gaps = [abs(value - by_point[("lc", size, overlap)]) for (family, size, overlap), value in by_point.items()
            if family == "ours" and ("lc", size, overlap) in by_point]
    spread = {family: max(r["success"] for r in rows if r["family"] == family)
              - min(r["success"] for r in rows if r["family"] == family) for family in best}
    print(f"spread over size and overlap within a family: {', '.join(f'{f} {v:.3f}' for f, v in spread.items())}; "
          f"mean gap between the splitters at the same size and overlap: {sum(gaps) / max(len(gaps), 1):.3f}")
    for test in tests:
        if (test["b_model"], test["b_retriever"]) == (MODEL, retriever) and test["b_strategy"] in {
                row["strategy"] for row in best.values()}:
            print(f"pick against {test['b_strategy']} x {retriever}: {test['a_value']:.3f} vs {test['b_value']:.3f}, "
                  f"+{test['wins']}/-{test['losses']} needles, Holm-adjusted p = {test['p_adjusted']:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--corpus")
    parser.add_argument("--eval-set")
    parser.add_argument("--out-of-domain")
    parser.add_argument("--retriever", action="append", help="the retrievers to report (default: dense and ann)")
    parser.add_argument("--report-only", action="store_true", help="read an evaluated --home, run nothing")
    args = parser.parse_args()
    seconds = None if args.report_only else evaluate(args.home, args.corpus, args.eval_set, args.out_of_domain)
    for retriever in args.retriever or ["dense", "ann"]:
        report(args.home, retriever, seconds)
        print()


if __name__ == "__main__":
    main()
