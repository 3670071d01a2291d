"""What BM25 once per strategy saves: two `rag-assets evaluate` runs of the same project, one before the change
(BM25 run inside every model x strategy partition) and one after it (run once per strategy by `lexical_runs`,
its ranking given to every model's hybrid fusion).

    .venv/bin/python bench/bm25_once.py HOME_BEFORE HOME_AFTER

Each HOME is the storage folder of one cold `rag-assets evaluate` (same corpus, models and strategies). For
each it prints, from what the runs stored:

- BM25's own time: the seconds of every BM25 ranking in the retrieval rows (``stage_ms``, summed over queries
  and partitions; before the change the index was built inside the first query's ranking, after it the
  index build is in `lexical_runs`' ``index_seconds`` metadata and is added), and how many times the rows
  were computed (partitions);
- the retrieval stage's seconds from Dagster's own step timings: `retrieval_runs` (and `lexical_runs`) steps
  of the runs in that storage folder's instance;
- the ratios after/before, measured on the same machine.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from bench.machine import describe  # noqa: E402
from rag_assets.lib.store.paths import partition_files  # noqa: E402

STEPS = ("retrieval_runs", "lexical_runs")


def bm25_seconds(home: Path) -> tuple[float, int, int]:
    """(seconds of BM25 rankings, BM25 index builds counted apart, partitions whose rows hold BM25 rankings)."""
    seconds, partitions = 0.0, 0
    for asset in STEPS:
        for file in partition_files(home, asset):
            table = pq.ParquetFile(file).read(columns=["retriever", "stage_ms"]).to_pylist()
            own = [row["stage_ms"] for row in table if row["retriever"] == "bm25"]
            if own:
                seconds += sum(own) / 1000.0
                partitions += 1
    index_seconds, builds = _metadata_sum(home, "lexical_runs", "index_seconds")
    return seconds + index_seconds, builds, partitions


def _instance(home: Path):
    from dagster import DagsterInstance

    from rag_assets.instance.dagster_yaml import ensure_dagster_home

    os.environ["DAGSTER_HOME"] = str(ensure_dagster_home(home))
    return DagsterInstance.get()


def _metadata_sum(home: Path, asset: str, name: str) -> tuple[float, int]:
    """The sum of a materialisation figure of ``asset`` over the instance's runs, and how many carried it."""
    from dagster import DagsterEventType

    total, count = 0.0, 0
    with _instance(home) as instance:
        for run in instance.get_runs():
            for entry in instance.all_logs(run.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION):
                materialization = entry.dagster_event.event_specific_data.materialization
                value = materialization.metadata.get(name)
                if materialization.asset_key.to_user_string() == asset and value is not None:
                    total, count = total + float(value.value), count + 1
    return total, count


def step_seconds(home: Path) -> dict[str, float]:
    """Seconds of the retrieval steps (Dagster's step stats), summed over the instance's runs."""
    seconds: dict[str, float] = defaultdict(float)
    with _instance(home) as instance:
        for run in instance.get_runs():
            for step in instance.get_run_step_stats(run.run_id):
                if step.end_time and step.start_time and step.step_key in STEPS:
                    seconds[step.step_key] += step.end_time - step.start_time
    return dict(seconds)


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    before, after = Path(sys.argv[1]), Path(sys.argv[2])
    print(describe())
    figures = {}
    for name, home in (("before", before), ("after", after)):
        seconds, builds, partitions = bm25_seconds(home)
        steps = step_seconds(home)
        figures[name] = (seconds, steps)
        print(f"{name:6s} {home}: BM25 {seconds:7.2f} s in {partitions} partitions' rows"
              + (f" (+ {builds} index builds counted apart)" if builds else "")
              + "; steps " + ", ".join(f"{step} {value:.1f} s" for step, value in sorted(steps.items())))
    (bm25_before, steps_before), (bm25_after, steps_after) = figures["before"], figures["after"]
    stage_before, stage_after = sum(steps_before.values()), sum(steps_after.values())
    print(f"RESULT BM25 seconds after/before {bm25_after / bm25_before:.3f} "
          f"({bm25_before:.2f} s -> {bm25_after:.2f} s, saved {bm25_before - bm25_after:.2f} s); "
          f"retrieval steps after/before {stage_after / stage_before:.3f} "
          f"({stage_before:.1f} s -> {stage_after:.1f} s)")


if __name__ == "__main__":
    main()
