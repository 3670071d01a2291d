"""How long `ask` takes from a warm index, beside the time to embed the query alone.

    RAG_ASSETS_HOME=... .venv/bin/python bench/ask.py [--model all-MiniLM-L6-v2] [--strategy boundaries_header]

Needs a home where `rag-assets evaluate` has run. Loads the index once (what a warm server holds),
asks every needle question of the default evaluation set once to warm the caches, then times each
question again: the whole ask (embedding, retrieval, gate, sources counted with the model's
tokenizer, prompt) per retriever, and the query embedding alone. Then ``--cold`` questions each asked by a
new ``rag-assets ask`` process (its whole wall time: imports, the verified ONNX export, the index).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.lib.answer.ask import ask, load_index  # noqa: E402
from rag_assets.lib.embed.models import load_model  # noqa: E402
from rag_assets.lib.store import paths  # noqa: E402
from rag_assets.settings import DEFAULT_EVAL_SET, current  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--strategy", default="boundaries_header")
    parser.add_argument("--cut", type=float, default=0.6)
    parser.add_argument("--cold", type=int, default=10, help="cold asks to time, each a new process (0: none)")
    args = parser.parse_args()
    home = current().home
    questions = [q for line in DEFAULT_EVAL_SET.read_text().splitlines() if line.strip()
                 for q in json.loads(line)["questions"].values()]
    embedder = load_model(args.model, onnx_dir=paths.onnx_dir(home))
    index = load_index(home, embedder, args.strategy)
    print(f"{len(questions)} questions, {args.model} x {args.strategy}, {len(index.chunks)} chunks, "
          f"runtime {getattr(embedder, 'runtime', 'native')}")
    embed_ms = []
    for question in questions:
        started = time.perf_counter()
        embedder.embed_queries([question])
        embed_ms.append((time.perf_counter() - started) * 1000)
    for retriever in ("dense", "late_interaction"):
        for question in questions:  # warm: token vectors of the candidates are computed once
            ask(index, question, retriever, args.cut)
        times = []
        for question in questions:
            started = time.perf_counter()
            ask(index, question, retriever, args.cut)
            times.append((time.perf_counter() - started) * 1000)
        print(f"  ask with {retriever:16}: median {statistics.median(times):6.1f} ms, p95 "
              f"{sorted(times)[int(0.95 * len(times))]:6.1f} ms per question")
    print(f"  query embedding alone     : median {statistics.median(embed_ms):6.1f} ms")
    cold = []
    for question in questions[: args.cold]:  # a new process each time: imports, model and index loaded from disk
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "rag_assets.cli", "ask", question], capture_output=True, check=True)
        cold.append(time.perf_counter() - started)
    if cold:
        print(f"  cold `rag-assets ask`     : median {statistics.median(cold):6.2f} s over {len(cold)} processes "
              f"(max {max(cold):.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
