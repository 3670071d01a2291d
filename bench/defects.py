"""The defects two audits introduced one at a time, each injected into a copy of the project and run
against the fast test set (``make test-fast``'s selection): caught (a test failed) or not.

    .venv/bin/python bench/defects.py [WORD ...]     # only the defects whose name holds a WORD

First the fast set runs once on a clean copy (rag_assets, rag_assets_tests, data, docs and the project
files): it must pass there, or no verdict would mean anything. Then, for each defect, a fresh copy, one
text substitution in one module (the defect), and the fast set again: every test that failed is named,
and the defect's own test file (the test file of the module it breaks) must be among them. Prints a
Markdown table with each run's seconds and exits 1 when any defect is not caught, or is caught only
outside its module's own tests.
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
COPIED = ("rag_assets", "rag_assets_tests", "bench", "data", "docs", "pyproject.toml", "workspace.yaml", "mkdocs.yml",
          ".gitignore", "README.md", "BENCHMARKS.md", "CHANGELOG.md")
FAST_SET = ("-m", "not integration and not servers and not browser")  # make test-fast's selection
WORKERS = os.environ.get("TEST_WORKERS", "2")


@dataclass(frozen=True)
class Defect:
    name: str
    module: str  # path of the module the defect is injected into
    old: str  # exactly one occurrence
    new: str
    own_tests: str  # the module's own test file: one of its tests must fail


DEFECTS = [
    # --- the first audit (issue 25) ---------------------------------------------------------------------
    Defect("a needle judged by document (any chunk of the right document counts as a hit)",
           "rag_assets/lib/evalsets/judging.py",
           'if holds_needle(canonical, chunk["start"], chunk["end"], text)', "if canonical",
           "rag_assets_tests/lib/evalsets/test_judging.py"),
    Defect("precision@k's Wilson interval with n instead of k x n in the denominator",
           "rag_assets/lib/evaluate/catalog.py",
           'trials = "count(*)" if self.slots == 1 else f"{self.slots} * count(*)"',
           'trials = "count(*)"',
           "rag_assets_tests/lib/evaluate/test_measures.py"),
    Defect("the AUROC bootstrap interval at the 25th/75th percentiles instead of 2.5/97.5",
           "rag_assets/lib/evaluate/refusal.py", "[2.5, 97.5]", "[25, 75]",
           "rag_assets_tests/lib/evaluate/test_refusal.py"),
    Defect("build stamps that ignore dimension, normalisation and extractor version",
           "rag_assets/lib/store/stamps.py",
           'GLOBAL_FIELDS = ("pipeline_version", "extractor_version", "snapshot_id")\n'
           'PER_MODEL_FIELDS = ("revision", "dimension", "normalized")',
           'GLOBAL_FIELDS = ("pipeline_version", "snapshot_id")\nPER_MODEL_FIELDS = ("revision",)',
           "rag_assets_tests/lib/store/test_stamps.py"),
    Defect("the chunking code version that ignores the strategy definitions",
           "rag_assets/lib/ingest/chunking.py",
           "definition = CHUNKER_VERSION + repr(sorted((name, s.definition()) for name, s in STRATEGIES.items()))",
           "definition = CHUNKER_VERSION", "rag_assets_tests/lib/ingest/test_chunking.py"),
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
           "rag_assets_tests/lib/embed/test_cluster.py"),
    Defect("the object store renaming the local file before the upload succeeds",
           "rag_assets/lib/store/object_store.py",
           "        key = self.key(local)\n        try:\n            self.fs.put_file(str(source), key)",
           "        key = self.key(local)\n        os.replace(source, local)\n        source = local\n        try:\n"
           "            self.fs.put_file(str(source), key)",
           "rag_assets_tests/lib/store/test_object_store.py"),
    Defect("`ask` choosing the worst configuration instead of the best",
           "rag_assets/lib/answer/choice.py", 'best, budget = rows[0], decision["budget"]',
           'best, budget = rows[-1], decision["budget"]', "rag_assets_tests/lib/answer/test_choice.py"),
    # --- the second audit (issue 34) --------------------------------------------------------------------
    Defect("a needle judged on the chunk's embedded text instead of its content (header and overlap count)",
           "rag_assets/lib/evalsets/judging.py",
           'if holds_needle(canonical, chunk["start"], chunk["end"], text)',
           'if fold_whitespace(text) in fold_whitespace(chunk["text"])',
           "rag_assets_tests/lib/evalsets/test_judging.py"),
    Defect("a needle judged from span_start (an overlap tail carried from the chunk before counts)",
           "rag_assets/lib/evalsets/judging.py",
           'if holds_needle(canonical, chunk["start"], chunk["end"], text)',
           'if holds_needle(canonical, chunk["span_start"], chunk["end"], text)',
           "rag_assets_tests/lib/evalsets/test_judging.py"),
    Defect("a needle allowed to straddle the end of one chunk into the next",
           "rag_assets/lib/evalsets/judging.py",
           "return fold(needle) in fold(canonical[start:end])",
           "return fold(needle) in fold(canonical[start:end + len(needle)])",
           "rag_assets_tests/lib/evalsets/test_judging.py"),
    # the verdict's three defects of the second audit (the lowest MRR per model, a finding that calls the worse
    # side better, an external retriever paired with the worst configuration) were in code that the decision at
    # a budget replaced; the decision's own rules take their place (0.7.1)
    Defect("the decision preferring the lower MRR among configurations of equal success",
           "rag_assets/lib/evaluate/decision.py",
           'order = lambda r: (-r[name], -r["mrr"], *cost_key(r),', 'order = lambda r: (-r[name], r["mrr"], *cost_key(r),',
           "rag_assets_tests/lib/evaluate/test_decision.py"),
    Defect("a tie on quality settled by the name before the cost",
           "rag_assets/lib/evaluate/decision.py",
           'order = lambda r: (-r[name], -r["mrr"], *cost_key(r), r["model"], r["strategy"], r["retriever"])',
           'order = lambda r: (-r[name], -r["mrr"], r["model"], r["strategy"], r["retriever"], *cost_key(r))',
           "rag_assets_tests/lib/evaluate/test_cheaper_equivalent.py"),
    Defect("non-inferiority tested against a margin above the pick (superiority) instead of below",
           "rag_assets/lib/evaluate/equivalence.py",
           "t = (mean + margin) / (spread / math.sqrt(n))", "t = (mean - margin) / (spread / math.sqrt(n))",
           "rag_assets_tests/lib/evaluate/test_equivalence.py"),
    Defect("the embedding cache key ignoring the model's revision (new weights reuse old vectors)",
           "rag_assets/lib/embed/partition.py",
           'return inside(Path(home), "embedding_cache", embedder.key, embedder.revision)',
           'return inside(Path(home), "embedding_cache", embedder.key)',
           "rag_assets_tests/lib/embed/test_partition.py"),
    Defect("a shard that the object store merged away kept locally on another machine",
           "rag_assets/lib/embed/cache.py",
           "                if self.store.is_copy(shard):\n                    self.store.drop_copy(shard)\n"
           "                else:\n                    self.store.publish(shard, shard)\n",
           "                if not self.store.is_copy(shard):\n                    self.store.publish(shard, shard)\n",
           "rag_assets_tests/lib/embed/test_cache.py"),
    Defect("the nightly sensor ignoring runs that are queued, not yet started",
           "rag_assets/nightly.py",
           "UNFINISHED = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING,",
           "UNFINISHED = [DagsterRunStatus.STARTING,", "rag_assets_tests/test_nightly.py"),
    Defect("MkDocs' base extensions without attr_list (`# Install { #setup }` stays text)",
           "rag_assets/lib/ingest/doc_sources.py", '"admonition", "attr_list", "def_list",', '"admonition", "def_list",',
           "rag_assets_tests/lib/ingest/test_doc_sources.py"),
    Defect("an approximately located external hit placed at the first place that matches instead of the best",
           "rag_assets/lib/ingest/alignment.py", "if covered > best.ratio:",
           "if covered >= LOCATED_RATIO > best.ratio:",
           "rag_assets_tests/lib/retrieve/test_external.py"),
    # --- needles that follow the edits (#53) ------------------------------------------------------------
    Defect("a moved needle asked at the document it left",
           "rag_assets/lib/evalsets/relocation.py", "Needle(n.id, r.doc_id, n.needle,", "Needle(n.id, n.doc_id, n.needle,",
           "rag_assets_tests/lib/evalsets/test_relocation.py"),
    Defect("an edited needle's nearest sentence offered whatever its similarity",
           "rag_assets/lib/evalsets/relocation.py", "if best is None or best[0] < SUCCESSOR_SIMILARITY:",
           "if best is None:", "rag_assets_tests/lib/evalsets/test_relocation.py"),
    Defect("the evaluation stopped when exactly the allowed share of needles is lost",
           "rag_assets/lib/evalsets/relocation.py", "len(lost) / len(relocations) <= max_share",
           "len(lost) / len(relocations) < max_share", "rag_assets_tests/lib/evalsets/test_relocation.py"),
    Defect("the regression alarm refusing two runs whose needles a corpus edit changed",
           "rag_assets/lib/evaluate/regressions.py", "older_needles is None) and file_hash(newer_hash) != file_hash(older_hash):",
           "older_needles is None) and newer_hash != older_hash:", "rag_assets_tests/lib/evaluate/test_regressions.py"),
    Defect("a needle whose text a person changed compared across two runs",
           "rag_assets/lib/evaluate/regressions.py",
           "unchanged = {n for n, text in older_needles.items() if newer_needles.get(n) == text}",
           "unchanged = set(older_needles)", "rag_assets_tests/lib/evaluate/test_regressions.py"),
    Defect("the gate passing a pull request that deleted a needle's answer",
           "rag_assets/lib/evaluate/gate.py", "return self.pick_changed or self.pick_dropped is not None or bool(self.removed)",
           "return self.pick_changed or self.pick_dropped is not None", "rag_assets_tests/lib/evaluate/test_gate.py"),
    Defect("the gate comparing a needle whose text a person changed",
           "rag_assets/lib/evaluate/gate.py",
           "unchanged = {n for n, text in baseline.needles.items() if needles.get(n) == text}",
           "unchanged = set(baseline.needles)", "rag_assets_tests/lib/evaluate/test_gate.py"),
    # --- the static findings of the second audit --------------------------------------------------------
    Defect("the whole-document strategy returning no chunks",
           "rag_assets/lib/ingest/chunking.py", "        return [[(0, len(text), title)]] if text.strip() else [[]]",
           "        return [[]]", "rag_assets_tests/lib/ingest/test_chunking.py"),
    Defect("an empty span after a cut table row that ends in a space (listed as an equivalent mutant)",
           "rag_assets/lib/ingest/chunking.py", "            if s_end > s_start:\n", "            if s_end >= s_start:\n",
           "rag_assets_tests/lib/ingest/test_chunking.py"),
    Defect("the refusal share reached by one query fewer (a count compared with '>')",
           "rag_assets/lib/evaluate/refusal.py", '["answered_with_needle"] >= needed(', '["answered_with_needle"] > needed(',
           "rag_assets_tests/lib/evaluate/test_refusal.py"),
]

def copy_project(into: Path) -> None:
    for name in COPIED:
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.exists():
            shutil.copy2(source, into / name)


def run_tests(folder: Path, selection: tuple[str, ...] = FAST_SET) -> tuple[int, list[str], str]:
    """pytest in ``folder`` on ``selection``: (exit code, the failed test ids, its last line)."""
    env = {**os.environ, "PYTHONPATH": str(folder), "PYTHONDONTWRITEBYTECODE": "1"}
    workers = ("-n", WORKERS, "--dist", "loadfile") if WORKERS != "0" else ()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, *selection],
                            cwd=folder, env=env, capture_output=True, text=True)
    failed = sorted({line.split()[1] for line in result.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))})
    last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr.strip()[-200:]
    return result.returncode, failed, last


def inject(folder: Path, defect: Defect) -> None:
    module = folder / defect.module
    text = module.read_text(encoding="utf-8")
    if text.count(defect.old) != 1:
        raise SystemExit(f"{defect.name}: cannot inject: the code it changes is not in {defect.module} once")
    module.write_text(text.replace(defect.old, defect.new), encoding="utf-8")


def check(defect: Defect, selection: tuple[str, ...] = FAST_SET) -> tuple[str, str]:
    """(verdict, the tests that failed) of one defect on a copy of the project."""
    with tempfile.TemporaryDirectory(prefix="rag-assets-defect-") as scratch:
        folder = Path(scratch)
        copy_project(folder)
        inject(folder, defect)
        code, failed, last = run_tests(folder, selection)
    if code == 0:
        return "NOT CAUGHT", last
    own = [test for test in failed if test.startswith(defect.own_tests)]
    said = f"{len(failed)} failed; own file: {', '.join(t.split('::')[-1] for t in own) or 'none'}"
    return ("caught" if own else "caught only outside its own tests"), said


def main(argv: list[str]) -> int:
    chosen = [d for d in DEFECTS if not argv or any(word in d.name for word in argv)]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rag-assets-clean-") as scratch:
        copy_project(Path(scratch))
        code, failed, last = run_tests(Path(scratch))
    if code != 0:
        print(f"the fast set fails without any defect ({last}): {', '.join(failed)}", file=sys.stderr)
        return 2
    print(f"clean copy: {last} ({time.monotonic() - started:.0f} s)\n")
    print("| defect | module | verdict | the tests that failed | seconds |\n|---|---|---|---|---|")
    missed = 0
    for defect in chosen:
        started = time.monotonic()
        verdict, said = check(defect)
        missed += verdict != "caught"
        print(f"| {defect.name} | `{defect.module.removeprefix('rag_assets/')}` | {verdict} | "
              f"{said.replace('|', '/')[:400]} | {time.monotonic() - started:.0f} |", flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
