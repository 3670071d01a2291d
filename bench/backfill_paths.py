"""What a rebuild of one model's partitions costs through the command line and through the UI's path (a
backfill launched on the webserver and run by the daemon), on the same home and partitions, in one run.

    .venv/bin/python bench/backfill_paths.py [--corpus default|tiny] [--home DIR] [--model all-MiniLM-L6-v2]
                                             [--strategies blind boundaries | all]

Builds a home (the default corpus, or the tests' tiny one; ``--home`` reuses one where those partitions
were evaluated), then re-materialises ``embeddings``, ``retrieval_runs`` and ``refusal_calibration`` of the
given partitions twice: as ``rag-assets backfill`` does (one process), and as a backfill launched through
GraphQL (what the UI's "Materialize" on those partitions does) under `dagster dev`. The UI's time runs
from the launch until the last of its runs has ended (the partitions are rebuilt), and its parts are
printed: until the daemon created the first run, each run's queue wait, start and steps. Prints both
times, per partition, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.lib.ingest.chunking import STRATEGIES  # noqa: E402
from rag_assets_tests.servers import DagsterDev, tiny_home_env  # noqa: E402

LAUNCH = """mutation($names: [String!]) { launchPartitionBackfill(backfillParams: {
  assetSelection: [{path: ["embeddings"]}, {path: ["retrieval_runs"]}, {path: ["refusal_calibration"]}],
  partitionNames: $names}) {
  __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }"""
RUNS = """query($id: String!) { partitionBackfillOrError(backfillId: $id) { __typename
  ... on PartitionBackfill { status numPartitions runs(limit: 100) { runId status creationTime startTime endTime } } } }"""
FINISHED = ("SUCCESS", "FAILURE", "CANCELED")


def graphql(url: str, query: str, variables: dict) -> dict:
    request = urllib.request.Request(f"{url}/graphql", data=json.dumps({"query": query, "variables": variables}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["data"]


def environment(corpus: str, home: Path) -> dict[str, str]:
    """The home's environment, with the automation sensor off: the backfill's runs alone are measured."""
    env = tiny_home_env(home) if corpus == "tiny" else {
        **os.environ, "RAG_ASSETS_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"), "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1"}
    return env | {"RAG_ASSETS_AUTOMATION": "stopped"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=["default", "tiny"], default="default")
    parser.add_argument("--home", type=Path, help="a home where these partitions were evaluated (default: a new one)")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--strategies", nargs="+", default=["blind", "boundaries"], help="or: all")
    args = parser.parse_args()
    strategies = list(STRATEGIES) if args.strategies == ["all"] else args.strategies
    home = args.home or Path(tempfile.mkdtemp(prefix="rag-bench-backfill-"))
    env = environment(args.corpus, home)
    cli = [sys.executable, "-m", "rag_assets.cli"]
    if args.home is None:
        subprocess.run([*cli, "evaluate", "--models", args.model, "--strategies", *strategies], env=env, check=True,
                       capture_output=True)
    partitions = len(strategies)
    started = time.perf_counter()
    subprocess.run([*cli, "backfill", "--model", args.model, "--strategies", *strategies], env=env, check=True,
                   capture_output=True)
    cli_seconds = time.perf_counter() - started  # includes the metrics run and the process start

    server = DagsterDev(env, home / "dagster-dev.log")
    try:
        server.wait_until_up()
        names = [f"{args.model}|{strategy}" for strategy in strategies]
        launched_at = time.time()
        started = time.perf_counter()
        launched = graphql(server.url, LAUNCH, {"names": names})["launchPartitionBackfill"]
        if launched["__typename"] != "LaunchBackfillSuccess":
            raise RuntimeError(launched)
        runs: list[dict] = []
        while time.perf_counter() - started < 3600:
            time.sleep(1)
            backfill = graphql(server.url, RUNS, {"id": launched["backfillId"]})["partitionBackfillOrError"]
            runs = backfill["runs"]
            if backfill["status"] not in ("REQUESTED", "IN_PROGRESS") or (
                    len(runs) >= partitions and all(run["status"] in FINISHED for run in runs)):
                break
        ui_seconds = time.perf_counter() - started
        status = backfill["status"]
    finally:
        server.stop()
    print(f"{partitions} partitions of {args.model} ({', '.join(strategies)}) on the {args.corpus} corpus, "
          f"embeddings + retrieval_runs + refusal_calibration:")
    print(f"  rag-assets backfill (one process; incl. start and the metrics): {cli_seconds:6.1f} s, "
          f"{cli_seconds / partitions:5.1f} s per partition")
    print(f"  UI backfill through the daemon ({len(runs)} runs, {', '.join(sorted({r['status'] for r in runs}))}; "
          f"backfill {status}): {ui_seconds:6.1f} s, {ui_seconds / partitions:5.1f} s per partition")
    if runs:
        first_created = min(run["creationTime"] for run in runs)
        print(f"    launch -> first run created: {first_created - launched_at:5.1f} s")
        for run in sorted(runs, key=lambda r: r["creationTime"]):
            begun, ended = run.get("startTime") or run["creationTime"], run.get("endTime") or run["creationTime"]
            print(f"    run {run['runId'][:8]}: created +{run['creationTime'] - launched_at:6.1f} s, started "
                  f"+{begun - launched_at:6.1f} s, ended +{ended - launched_at:6.1f} s ({ended - begun:5.1f} s running)")
    print(f"  ratio UI / CLI: {ui_seconds / cli_seconds:.2f}")
    return 0 if runs and all(run["status"] == "SUCCESS" for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
