"""The eight defects an audit introduced one at a time, each injected into a copy of the project and run
against the tests meant to catch it: caught (a test failed) or not.

    .venv/bin/python bench/defects.py [NAME ...]

For each defect: a copy of the project in a temporary folder (rag_assets, rag_assets_tests, data, docs
and the project files), one text substitution in one module (the defect), then pytest on the tests
named for it, imported from the copy; every test that failed is named. First the same tests run on the copy without any defect: they
must pass there, or the verdict would mean nothing. Prints a table and exits 1 when any defect is not
caught. Real servers and models start where the named tests need them (Dask, S3); the whole run takes
a few minutes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
COPIED = ("rag_assets", "rag_assets_tests", "data", "docs", "pyproject.toml", "workspace.yaml", "mkdocs.yml",
          ".gitignore", "README.md", "BENCHMARKS.md", "CHANGELOG.md")


@dataclass(frozen=True)
class Defect:
    name: str
    module: str  # path of the module the defect is injected into
    old: str  # exactly one occurrence
    new: str
    tests: tuple[str, ...]  # pytest node ids or files that should catch it


DEFECTS = [
    Defect("a needle judged by document (any chunk of the right document counts as a hit)",
           "rag_assets/lib/evalsets/judging.py",
           'if holds_needle(canonical, chunk["span_start"], chunk["end"], text)', "if canonical",
           ("rag_assets_tests/lib/retrieve/test_runs.py", "rag_assets_tests/test_whole_graph.py",
            "rag_assets_tests/assets/test_beir_graph.py")),
    Defect("precision@k's Wilson interval with n instead of k x n in the denominator",
           "rag_assets/lib/evaluate/measures.py",
           'f"wilson_low(sum(relevant_at_{k}), {k} * count(*)) AS precision_at_{k}_low"',
           'f"wilson_low(sum(relevant_at_{k}), count(*)) AS precision_at_{k}_low"',
           ("rag_assets_tests/lib/evaluate/test_measures.py",)),
    Defect("the AUROC bootstrap interval at the 25th/75th percentiles instead of 2.5/97.5",
           "rag_assets/lib/evaluate/refusal.py", "[2.5, 97.5]", "[25, 75]",
           ("rag_assets_tests/lib/evaluate/test_refusal.py",)),
    Defect("build stamps that ignore dimension, normalisation and extractor version",
           "rag_assets/lib/store/stamps.py",
           'GLOBAL_FIELDS = ("pipeline_version", "extractor_version", "snapshot_id")\n'
           'PER_MODEL_FIELDS = ("revision", "dimension", "normalized")',
           'GLOBAL_FIELDS = ("pipeline_version", "snapshot_id")\nPER_MODEL_FIELDS = ("revision",)',
           ("rag_assets_tests/lib/store/test_stamps.py",)),
    Defect("the chunking code version that ignores the strategy definitions",
           "rag_assets/lib/ingest/chunking.py", "definition = CHUNKER_VERSION + repr(sorted(STRATEGIES.items()))",
           "definition = CHUNKER_VERSION", ("rag_assets_tests/lib/ingest/test_chunking.py",)),
    Defect("the Dask path dropping shard offsets (vectors put back in the wrong order)",
           "rag_assets/lib/embed/cluster.py",
           "        for future in as_completed(list(futures), loop=self.client.loop):\n"
           "            vectors = future.result()\n"
           "            yield np.arange(futures[future], futures[future] + len(vectors)), vectors\n",
           "        done = 0\n"
           "        for future in as_completed(list(futures), loop=self.client.loop):\n"
           "            vectors = future.result()\n"
           "            yield np.arange(done, done + len(vectors)), vectors\n"
           "            done += len(vectors)\n",
           ("rag_assets_tests/test_cluster_embedding.py::test_vectors_from_a_dask_cluster_equal_the_in_process_ones_in_order",)),
    Defect("the object store renaming the local file before the upload succeeds",
           "rag_assets/lib/store/object_store.py",
           "        key = self.key(local)\n        try:\n            self.fs.put_file(str(source), key)",
           "        key = self.key(local)\n        os.replace(source, local)\n        source = local\n        try:\n"
           "            self.fs.put_file(str(source), key)",
           ("rag_assets_tests/test_object_store.py::test_a_failed_upload_replaces_nothing_there_or_here",)),
    Defect("`ask` choosing the worst configuration instead of the best",
           "rag_assets/lib/answer/choice.py", 'best = max(rows, key=lambda r: (r["mrr"], r["success_at_4"]))',
           'best = min(rows, key=lambda r: (r["mrr"], r["success_at_4"]))', ("rag_assets_tests/test_ask.py",)),
]


def copy_project(into: Path) -> None:
    for name in COPIED:
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.exists():
            shutil.copy2(source, into / name)


def run_tests(folder: Path, tests: tuple[str, ...]) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(folder), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                            cwd=folder, env=env, capture_output=True, text=True)
    failed = [line.split()[1].split("::")[-1] for line in result.stdout.splitlines()
              if line.startswith(("FAILED ", "ERROR "))]
    last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr.strip()[-200:]
    return result.returncode, (f"{len(failed)} failed: {', '.join(failed)}" if failed else last)


def check(defect: Defect) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="rag-assets-defect-") as scratch:
        folder = Path(scratch)
        copy_project(folder)
        code, said = run_tests(folder, defect.tests)
        if code != 0:
            return "tests fail without the defect", said
        module = folder / defect.module
        text = module.read_text(encoding="utf-8")
        if text.count(defect.old) != 1:
            return "cannot inject (the code it changes is not there once)", defect.module
        module.write_text(text.replace(defect.old, defect.new), encoding="utf-8")
        code, said = run_tests(folder, defect.tests)
        return ("caught" if code != 0 else "NOT CAUGHT"), said


def main(argv: list[str]) -> int:
    chosen = [d for d in DEFECTS if not argv or any(word in d.name for word in argv)]
    print("| defect | verdict | the tests that failed | seconds |\n|---|---|---|---|")
    missed = 0
    for defect in chosen:
        started = time.monotonic()
        verdict, said = check(defect)
        missed += verdict != "caught"
        print(f"| {defect.name} | {verdict} | {said.replace('|', '/')[:400]} | {time.monotonic() - started:.0f} |",
              flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
