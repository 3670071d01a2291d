"""What a rebuild costs through the command line and through the UI's path (a backfill launched on
the webserver and run by the daemon), on the same home and partitions, measured in one run.

    .venv/bin/python bench/backfill_paths.py [--model wordllama] [--strategies blind boundaries]

Builds a home on the tests' tiny corpus, then re-materialises ``embeddings`` and ``retrieval_runs``
of the given partitions twice: in-process as ``rag-assets backfill`` does, and as a backfill
launched through GraphQL (what the UI's "Materialize" does) on `dagster dev`. Prints the wall time
per partition of each path and their ratio.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets_tests.servers import DagsterDev, tiny_home_env  # noqa: E402

FIXTURES = PROJECT / "rag_assets_tests" / "fixtures"
LAUNCH = """mutation($names: [String!]) { launchPartitionBackfill(backfillParams: {
  assetSelection: [{path: ["embeddings"]}, {path: ["retrieval_runs"]}], partitionNames: $names}) {
  __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }"""
STATUS = """query($id: String!) { partitionBackfillOrError(backfillId: $id) { __typename
  ... on PartitionBackfill { status } } }"""


def graphql(url: str, query: str, variables: dict) -> dict:
    request = urllib.request.Request(f"{url}/graphql", data=json.dumps({"query": query, "variables": variables}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())["data"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="wordllama")
    parser.add_argument("--strategies", nargs="+", default=["blind", "boundaries"])
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="rag-bench-backfill-"))
    env = tiny_home_env(home)
    cli = [sys.executable, "-m", "rag_assets.cli"]
    subprocess.run([*cli, "evaluate", "--models", args.model, "--strategies", *args.strategies], env=env, check=True,
                   capture_output=True)
    partitions = len(args.strategies)
    started = time.perf_counter()
    subprocess.run([*cli, "backfill", "--model", args.model, "--strategies", *args.strategies], env=env, check=True,
                   capture_output=True)
    cli_seconds = time.perf_counter() - started  # includes the metrics run and the process start

    server = DagsterDev(env, home / "dagster-dev.log")
    try:
        server.wait_until_up()
        names = [f"{args.model}|{strategy}" for strategy in args.strategies]
        started = time.perf_counter()
        launched = graphql(server.url, LAUNCH, {"names": names})["launchPartitionBackfill"]
        if launched["__typename"] != "LaunchBackfillSuccess":
            raise RuntimeError(launched)
        status = "REQUESTED"
        while status in ("REQUESTED", "IN_PROGRESS", "CANCELING") and time.perf_counter() - started < 900:
            time.sleep(1)
            status = graphql(server.url, STATUS, {"id": launched["backfillId"]})["partitionBackfillOrError"]["status"]
        ui_seconds = time.perf_counter() - started
    finally:
        server.stop()
    print(f"{partitions} partitions of {args.model} ({', '.join(args.strategies)}), embeddings + retrieval_runs:")
    print(f"  rag-assets backfill (one process; incl. start and the metrics): {cli_seconds:6.1f} s, "
          f"{cli_seconds / partitions:5.1f} s per partition")
    print(f"  UI backfill through the daemon (status {status}):             {ui_seconds:6.1f} s, "
          f"{ui_seconds / partitions:5.1f} s per partition")
    print(f"  ratio UI / CLI: {ui_seconds / cli_seconds:.2f}")
    return 0 if status.startswith("COMPLETED") else 1


if __name__ == "__main__":
    sys.exit(main())
