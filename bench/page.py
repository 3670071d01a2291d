"""The evaluation page of a storage folder: how large one file it is and how long it takes to write, beside what
it is made from.

    .venv/bin/python bench/page.py HOME

HOME is the storage folder of an evaluation (`make demo` fills storage/). Writes the page into a temporary
folder (the storage folder is read only), and prints its size, the seconds it took, its share of the
metrics database and of the corpus's canonical text it quotes from, and the sizes of its parts before
compression.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from bench.machine import describe  # noqa: E402
from rag_assets.lib.evaluate.page import render  # noqa: E402
from rag_assets.lib.evaluate.page_data import gather  # noqa: E402
from rag_assets.lib.store.paths import duckdb_path, partition_path  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    home = Path(argv[0])
    database = duckdb_path(home)
    print(describe())
    started = time.perf_counter()
    with duckdb.connect(str(database), read_only=True) as connection:
        data = gather(connection, home)
    gathered = time.perf_counter() - started
    text = render(data)
    seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "index.html"
        page.write_text(text, encoding="utf-8")
        size = page.stat().st_size
    canonical = sum(len(t) for t in pq.read_table(partition_path(home, "extracted_text"), columns=["text"])
                    .column("text").to_pylist())
    print(f"page {size / 2**20:.2f} MB in {seconds:.2f} s ({gathered:.2f} s reading DuckDB and the partitions); "
          f"{len(data['configurations'])} configurations, {len(data['needles'])} needles, {len(data['questions'])} "
          f"questions, {len(data['chunks'])} chunks quoted, {len(data['runs'])} runs")
    print("parts before compression: " + ", ".join(
        f"{name} {len(json.dumps(value, separators=(',', ':'))) / 2**20:.2f} MB" for name, value in data.items()
        if len(json.dumps(value, separators=(",", ":"))) > 2**16))
    print(f"RESULT page / metrics.duckdb {size / database.stat().st_size:.3f}; page / canonical text "
          f"{size / canonical:.3f} ({canonical / 2**20:.2f} MB of text)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
