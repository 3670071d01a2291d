"""The mutation score of each core module: `mutmut run` (configured in pyproject.toml, [tool.mutmut]), then
per module the mutants killed (a timeout counts as killed: the tests noticed) out of those that are not
equivalent, and every survivor named.

    make mutation                             # = bench/mutation.py --run
    .venv/bin/python bench/mutation.py --run  # a fresh `mutmut run` (timed), then the scores
    .venv/bin/python bench/mutation.py        # the scores of the last run (mutants/ is kept between runs)

An equivalent mutant changes nothing a caller can observe (a default argument never used, a message the
tests do not read being the only change is NOT one of these): it is listed, with the reason, in
bench/equivalent_mutants.json and left out of the score. Exits 1 when a module scores under 0.90, a
mutant survives without being listed, or a listed one was killed or is gone (the list is out of date).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
EQUIVALENT = PROJECT / "bench" / "equivalent_mutants.json"
TARGET = 0.90
KILLED = {"killed", "timeout", "caught by type check"}


def statuses() -> dict[str, str]:
    """{mutant name: status} of the last `mutmut run`."""
    result = subprocess.run([str(Path(sys.executable).with_name("mutmut")), "results", "--all", "true"], cwd=PROJECT,
                            capture_output=True, text=True, check=True)
    found = {}
    for line in result.stdout.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name:
            found[name] = status
    return found


def module_of(mutant: str) -> str:
    """``rag_assets.lib.store.stamps.x_stamp_problems__mutmut_42`` -> ``rag_assets/lib/store/stamps.py``."""
    dotted = re.match(r"(.*?)\.x[_\u01c1]", mutant).group(1)  # x_function or xǁClassǁmethod
    return dotted.replace(".", "/") + ".py"


def run_mutmut(workers: int) -> None:
    """A fresh `mutmut run` (mutants/ removed first), its time printed."""
    shutil.rmtree(PROJECT / "mutants", ignore_errors=True)
    started = time.perf_counter()
    subprocess.run([str(Path(sys.executable).with_name("mutmut")), "run", "--max-children", str(workers)],
                   cwd=PROJECT, check=True, stdout=subprocess.DEVNULL)
    print(f"mutmut run: {len(statuses())} mutants in {(time.perf_counter() - started) / 60:.1f} min "
          f"with {workers} workers\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="run mutmut afresh first (else: the last run's results)")
    parser.add_argument("--workers", type=int, default=2)
    arguments = parser.parse_args()
    if arguments.run:
        run_mutmut(arguments.workers)
    equivalent = json.loads(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}
    found = statuses()
    by_module: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for mutant, status in found.items():
        kind = "equivalent" if mutant in equivalent else "killed" if status in KILLED else status
        by_module[module_of(mutant)][kind].append(mutant)
    print("| module | mutants | killed | equivalent | survived | no tests | score | killed of all |\n"
          "|---|---|---|---|---|---|---|---|")
    failing = []
    for module in sorted(by_module):
        kinds = by_module[module]
        total = sum(len(names) for names in kinds.values())
        counted = total - len(kinds["equivalent"])
        score = len(kinds["killed"]) / counted if counted else 1.0
        print(f"| `{module}` | {total} | {len(kinds['killed'])} | {len(kinds['equivalent'])} | {len(kinds['survived'])} "
              f"| {len(kinds['no tests'])} | {score:.2f} | {len(kinds['killed']) / total:.2f} |")
        if score < TARGET:
            failing.append(module)
    left = sorted(name for kinds in by_module.values() for kind, names in kinds.items()
                  if kind not in ("killed", "equivalent") for name in names)
    if left:
        print(f"\n{len(left)} mutants neither killed nor listed as equivalent:")
        print("\n".join(f"  {name}" for name in left))
    # mutmut numbers a function's mutants in order: after an edit, a listed name may be another mutant
    stale = sorted(name for name in equivalent if found.get(name) in KILLED or name not in found)
    if stale:
        print(f"\n{len(stale)} mutants listed as equivalent were killed or no longer exist (the code moved on: "
              "check bench/equivalent_mutants.json):")
        print("\n".join(f"  {name}" for name in stale))
    return 1 if failing or left or stale else 0


if __name__ == "__main__":
    sys.exit(main())
