"""How long the README's two commands take on a fresh clone of this machine class, installs included:
written to docs/figures/setup.json, from which the README's and the docs' times are taken.

    .venv/bin/python bench/setup_times.py [--only demo|test] [--cold]

Clones the committed HEAD into a temporary folder (commit first: uncommitted changes are not
measured), then runs `make demo` and `make test` there one after the other, each from nothing: its
own .venv, its own storage folder, the environment without any RAG_ASSETS_ variable. By default
pip's download cache is the machine's (warm, as for CI here); with --cold it is an empty folder, so
every package is downloaded as on a new machine. The Debian packages already installed are shared
either way. Prints each command's wall time and exit status; a command that fails is recorded as
failed, with the end of its output. Warm and cold are recorded apart (``make_demo`` and
``make_demo_cold``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from bench.machine import describe  # noqa: E402

OUT = PROJECT / "docs" / "figures" / "setup.json"



def _timed(command: list[str], folder: Path, log: Path, pip_cache: Path | None) -> dict:
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("RAG_ASSETS_", "DAGSTER_", "VIRTUAL_ENV"))}
    if pip_cache is not None:
        env["PIP_CACHE_DIR"] = str(pip_cache)
    started = time.monotonic()
    with log.open("w") as output:
        result = subprocess.run(command, cwd=folder, env=env, stdout=output, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - started
    text = log.read_text(errors="replace")
    passed = re.findall(r"(\d+) passed", text)
    return {"command": " ".join(command), "seconds": round(seconds), "minutes": round(seconds / 60, 1),
            "exit": result.returncode, "tests_passed": int(passed[-1]) if passed else None,
            **({"tail": text[-2000:]} if result.returncode else {})}


def summary(figures: dict) -> str:
    """The sentence the documentation shows (docs/hooks.py: ``{{ figure setup.summary }}``)."""
    def times(suffix: str) -> str | None:
        demo, test = figures.get(f"make_demo{suffix}"), figures.get(f"make_test{suffix}")
        if not demo or not test:
            return None
        failed = "".join(f" (`make {name}` exited {result['exit']})" for name, result in (("demo", demo), ("test", test))
                         if result["exit"])
        demo_commit, test_commit = demo.get("commit", figures["commit"]), test.get("commit", figures["commit"])
        demo_at = f" (commit `{demo_commit}`)" if demo_commit != test_commit else ""
        where = f"on {test.get('measured', figures['measured'])}, {test.get('machine', figures['machine'])}"
        return (f"`make demo` took {demo['minutes']} minutes{demo_at} and `make test` {test['minutes']} minutes "
                f"({test['tests_passed']} tests, commit `{test_commit}`, {where})" + failed)

    cold, warm = times("_cold"), times("")
    parts = [f"on a new machine (every package downloaded) {cold}" if cold else None,
             f"with pip's download cache warm, as for CI here, {warm}" if warm else None]
    return ("From a fresh clone on this machine class (x86_64, 2 cores, 24 GiB), installs included: "
            + "; ".join(part for part in parts if part) + ". Measured by `bench/setup_times.py`.")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("demo", "test"))
    parser.add_argument("--cold", action="store_true", help="an empty pip download cache, as on a new machine")
    args = parser.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT, capture_output=True, text=True,
                            check=True).stdout.strip()
    figures = json.loads(OUT.read_text()) if OUT.exists() else {}
    where = {"commit": commit, "machine": describe(), "measured": datetime.now(timezone.utc).strftime("%Y-%m-%d")}
    with tempfile.TemporaryDirectory(prefix="rag-assets-clone-") as scratch:
        clone = Path(scratch) / "rag_assets"
        subprocess.run(["git", "clone", "--quiet", str(PROJECT), str(clone)], check=True)
        for target in ("demo", "test"):
            if args.only and target != args.only:
                continue
            key = f"make_{target}" + ("_cold" if args.cold else "")
            print(f"make {target} on a fresh clone of {commit}{' (cold pip cache)' if args.cold else ''} ...", flush=True)
            cache = Path(scratch) / f"pip-cache-{target}" if args.cold else None
            figures[key] = _timed(["make", target], clone, Path(scratch) / f"{target}.log", cache) | where
            print(f"make {target}: {figures[key]['seconds']} s, exit {figures[key]['exit']}", flush=True)
    figures |= where | {"command": "python bench/setup_times.py"}
    figures["summary"] = summary(figures)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(PROJECT)}")
    return 0 if all(result.get("exit", 0) == 0 for key, result in figures.items() if key.startswith("make_")) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
