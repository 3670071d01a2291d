"""Real servers for tests: free loopback ports, `dagster dev` in its own process session, stopped by
its process group id with SIGINT (then SIGKILL), leaving nothing running; and the environment of a
tiny home those servers (and `rag-assets`) run against."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import rag_assets

PROJECT = Path(rag_assets.__file__).resolve().parents[1]
FIXTURES = PROJECT / "rag_assets_tests" / "fixtures"


def tiny_home_env(home: Path, models_file: Path | None = None) -> dict[str, str]:
    """The environment of a storage folder on the tests' tiny corpus and needles (and its Dagster
    instance under it), with extra registry entries from ``models_file``, offline."""
    env = {**os.environ, "RAG_ASSETS_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"),
           "RAG_ASSETS_CORPUS": str(FIXTURES / "tiny_corpus"), "RAG_ASSETS_EVAL_SET": str(FIXTURES / "tiny_needles.jsonl"),
           "RAG_ASSETS_OUT_OF_DOMAIN": str(FIXTURES / "tiny_out_of_domain.jsonl"), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    return env | ({"RAG_ASSETS_MODELS_FILE": str(models_file)} if models_file else {})


def register_wordllama_copy(folder: Path, registry: Path) -> Path:
    """A registry file naming ``folder`` (a copy of WordLlama's weights) as model ``wordllama-copy``."""
    registry.write_text(json.dumps([{"key": "wordllama-copy", "loader": "wordllama", "package": "wordllama",
                                     "dimension": 256, "window": None, "folder": str(folder)}]))
    return registry


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


class DagsterDev:
    """``dagster dev`` (webserver and daemon) on 127.0.0.1:port against ``env``'s DAGSTER_HOME."""

    def __init__(self, env: dict[str, str], log: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dagster", "dev", "-w", str(PROJECT / "workspace.yaml"), "-h", "127.0.0.1",
             "-p", str(self.port)],
            cwd=PROJECT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_until_up(self, seconds: float = 180) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"dagster dev exited with {self.process.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(f"{self.url}/server_info", timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(1)
        raise TimeoutError(f"dagster dev did not answer at {self.url} in {seconds} s; see {self.log.name}")

    def stop(self, seconds: float = 60) -> None:
        """SIGINT to the whole process session, SIGKILL after ``seconds``; nothing is left running."""
        pgid = self.process.pid  # a new session: its id is the leader's pid
        if group_alive(pgid):
            os.killpg(pgid, signal.SIGINT)
        deadline = time.monotonic() + seconds
        while group_alive(pgid) and time.monotonic() < deadline:
            self.process.poll()
            time.sleep(0.5)
        if group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)
        self.process.wait(timeout=30)
        deadline = time.monotonic() + 15  # killed children are reaped by init, not at once
        while group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.2)
        self.log.close()
        assert not group_alive(pgid), "dagster dev left processes running"
