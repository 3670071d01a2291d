"""One large document: extraction and chunking time and peak memory at 5, 20 and 50 MB.

    .venv/bin/python bench/large_document.py [--sizes 5 20 50] [--format text] [--strategy boundaries_header]

The document is synthetic and seeded: paragraphs of sentences drawn from the default corpus's words,
a heading every 40 paragraphs (Markdown and HTML) so sections exist. Each size runs in its own process:
``extract`` reads and extracts the file (as `extracted_text` does), ``chunk`` chunks the extracted
text with the strategy. Peak memory is ru_maxrss less that of a process that only imported the same
modules. Prints seconds and MB per stage and size, MB per input MB, and the growth exponent between
the smallest and the largest size (1 = linear).
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SUFFIX = {"text": ".txt", "markdown": ".md", "html": ".html"}


def write_document(path: Path, megabytes: float, fmt: str, seed: int = 7) -> None:
    """A document of about ``megabytes`` MB: seeded sentences in paragraphs, headings every 40."""
    words = sorted(set((ROOT / "data" / "corpus" / "python-3.11-docs" / "LICENSE").read_text().lower().split()))
    generator = random.Random(seed)
    target, written, paragraph = int(megabytes * 2**20), 0, 0
    with path.open("w", encoding="utf-8") as out:
        if fmt == "html":
            out.write("<html><head><title>Large</title></head><body><main>\n")
        while written < target:
            if paragraph % 40 == 0:
                title = f"Part {paragraph // 40 + 1}"
                block = {"text": f"{title}\n\n", "markdown": f"## {title}\n\n", "html": f"<h2>{title}</h2>\n"}[fmt]
            else:
                sentences = [" ".join(generator.choice(words) for _ in range(generator.randint(8, 20))).capitalize() + "."
                             for _ in range(generator.randint(2, 6))]
                text = " ".join(sentences)
                block = f"<p>{html.escape(text)}</p>\n" if fmt == "html" else text + "\n\n"
            out.write(block)
            written += len(block.encode("utf-8"))
            paragraph += 1
        if fmt == "html":
            out.write("</main></body></html>\n")


def _stage(kind: str, path: str, fmt: str, strategy: str) -> dict:
    import hashlib

    from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_rows
    from rag_assets.lib.ingest.documents import extract_file

    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    folder, name = os.path.split(path)
    started = time.perf_counter()
    row = extract_file(Path(folder), name, fmt, hashlib.sha256(Path(path).read_bytes()).hexdigest(), 1 << 40)
    extracted = time.perf_counter()
    assert row["status"] == "ok", row["error"]
    chunks = 0
    if kind == "chunk":
        started = time.perf_counter()
        chunks = len(chunk_rows([row | {"snapshot_id": "bench"}], STRATEGIES[strategy]))
    seconds = time.perf_counter() - started if kind == "chunk" else extracted - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": seconds, "peak_mb": (peak - baseline) / 1024, "characters": len(row["text"]), "chunks": chunks}


def measure(kind: str, path: Path, fmt: str, strategy: str) -> dict:
    output = subprocess.run([sys.executable, __file__, "--stage", kind, str(path), fmt, strategy], check=True,
                            capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=float, default=[5, 20, 50])
    parser.add_argument("--format", choices=sorted(SUFFIX), default="text")
    parser.add_argument("--strategy", default="boundaries_header")
    parser.add_argument("--stage", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:
        print(json.dumps(_stage(*args.stage)))
        return 0
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            path = Path(folder) / f"large-{size:g}{SUFFIX[args.format]}"
            write_document(path, size, args.format)
            megabytes = path.stat().st_size / 2**20
            for kind in ("extract", "chunk"):
                results[(kind, size)] = result = measure(kind, path, args.format, args.strategy)
                print(f"{kind:8s} {megabytes:6.1f} MB {args.format}: {result['seconds']:7.2f} s, peak "
                      f"{result['peak_mb']:7.0f} MB ({result['peak_mb'] / megabytes:4.1f} MB per input MB)"
                      + (f", {result['chunks']} chunks" if kind == "chunk" else ""), flush=True)
            path.unlink()
    small, large = min(args.sizes), max(args.sizes)
    if large > small:
        for kind in ("extract", "chunk"):
            ratio = math.log(large / small)
            time_exponent = math.log(results[(kind, large)]["seconds"] / results[(kind, small)]["seconds"]) / ratio
            memory_exponent = math.log(max(results[(kind, large)]["peak_mb"], 1) /
                                       max(results[(kind, small)]["peak_mb"], 1)) / ratio
            print(f"{kind}: time exponent {time_exponent:.2f}, memory exponent {memory_exponent:.2f} "
                  f"({small:g} -> {large:g} MB; 1 = linear)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
