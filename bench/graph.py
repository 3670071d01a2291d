"""The whole graph, cold and warm: `rag-assets evaluate` into a fresh storage folder, then again with
nothing changed, with wall time per asset from Dagster's own step timings.

    .venv/bin/python bench/graph.py [--home DIR] [-- extra evaluate options]

Prints, for each pass: wall time, peak memory of the process, texts embedded and reused, token
vectors computed and reused by late interaction, and the seconds each asset's steps took (summed
over the runs and partitions of that pass, from the instance's step stats). The targets: the warm
pass embeds nothing and takes under a tenth of the cold one. The storage folder is kept (printed) so
that its figures can be compared with `bench/same_metrics.py`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIGURES = {"embeddings": ("texts_embedded", "texts_reused"),
           "retrieval_runs": ("token_vectors_computed", "token_vectors_reused")}


def run_pass(home: Path, extra: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in GB, exit status) of one `rag-assets evaluate` into ``home``."""
    env = dict(os.environ, RAG_ASSETS_HOME=str(home), HF_HUB_OFFLINE="1")
    started = time.perf_counter()
    process = subprocess.Popen([str(Path(sys.executable).parent / "rag-assets"), "evaluate", *extra], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - started, usage.ru_maxrss / 1e6, os.waitstatus_to_exitcode(status)


def step_figures(home: Path, since: float) -> tuple[dict[str, float], dict[str, int]]:
    """Seconds per asset (step stats of the runs created after ``since``) and summed metadata figures."""
    from dagster import DagsterEventType, DagsterInstance, RunsFilter

    from rag_assets.instance.dagster_yaml import ensure_dagster_home

    os.environ["DAGSTER_HOME"] = str(ensure_dagster_home(home))
    seconds: dict[str, float] = defaultdict(float)
    totals: dict[str, int] = defaultdict(int)
    with DagsterInstance.get() as instance:
        for run in instance.get_runs(RunsFilter(created_after=_utc(since))):
            for step in instance.get_run_step_stats(run.run_id):
                if step.end_time and step.start_time:
                    seconds[step.step_key] += step.end_time - step.start_time
            for entry in instance.all_logs(run.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION):
                materialization = entry.dagster_event.event_specific_data.materialization
                for name in FIGURES.get(materialization.asset_key.to_user_string(), ()):
                    value = materialization.metadata.get(name)
                    totals[name] += int(value.value) if value is not None else 0
    return dict(seconds), dict(totals)


def _utc(timestamp: float):
    from datetime import datetime, timezone

    return datetime.fromtimestamp(timestamp, tz=timezone.utc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="storage folder (default: a new temporary one, kept)")
    parser.add_argument("extra", nargs="*", help="options passed to rag-assets evaluate (after --)")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="rag_graph_bench_"))
    print(f"storage folder {home}; {os.cpu_count()} CPUs", flush=True)
    passes = {}
    for name in ("cold", "warm"):
        since = time.time()
        wall, peak_gb, status = run_pass(home, args.extra)
        seconds, totals = step_figures(home, since)
        passes[name] = (wall, peak_gb, status, seconds, totals)
        print(f"{name}: {wall:7.1f} s wall, peak memory {peak_gb:.2f} GB, exit {status}, "
              + ", ".join(f"{k} {v}" for k, v in sorted(totals.items())), flush=True)
    cold, warm = passes["cold"], passes["warm"]
    print("\nseconds per asset (Dagster step timings, summed over partitions)")
    print(f"{'asset':32s} {'cold':>8s} {'warm':>8s}")
    for step in sorted(cold[3], key=lambda s: -cold[3][s]):
        print(f"{step:32s} {cold[3][step]:8.1f} {warm[3].get(step, 0.0):8.1f}")
    print(f"{'(sum of steps)':32s} {sum(cold[3].values()):8.1f} {sum(warm[3].values()):8.1f}")
    ratio = warm[0] / cold[0]
    embedded = warm[4].get("texts_embedded", 0)
    print(f"\nRESULT warm/cold {ratio:.3f} (target < 0.1), warm texts embedded {embedded} (target 0), "
          f"warm token vectors computed {warm[4].get('token_vectors_computed', 0)} "
          f"{'PASS' if ratio < 0.1 and embedded == 0 and not cold[2] and not warm[2] else 'FAIL'}")
    print(f"token cache on disk: {_folder_mb(home / 'token_cache'):.0f} MB; "
          f"embedding cache: {_folder_mb(home / 'embedding_cache'):.0f} MB")


def _folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6 if folder.is_dir() else 0.0


if __name__ == "__main__":
    main()
