"""Every server a setting names is asked once before a command runs anything: a closed port, a server that
accepts and says nothing, and an HTTP proxy are each one paragraph naming the setting, the address and
what answered, and no file of the home changes; the real servers (Ray, Dask, PostgreSQL, S3) pass."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rag_assets.runner.services import configured, unreachable
from rag_assets.settings import Settings
from rag_assets_tests.servers import DaskCluster, PostgresServer, RayHead, S3Server, free_port, tiny_home_env

pytestmark = [pytest.mark.integration]

PROJECT = Path(__file__).resolve().parents[2]


class SilentServer:
    """Accepts every connection on 127.0.0.1 and never says a word (a firewall or proxy that holds it)."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.socket.accept()[0])
            except OSError:
                return

    def stop(self) -> None:
        self.socket.close()
        for connection in self.held:
            connection.close()


@pytest.fixture
def silent():
    server = SilentServer()
    yield server
    server.stop()


def home_state(home: Path) -> dict[str, str]:
    return {str(path.relative_to(home)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(home.rglob("*")) if path.is_file()}


def cases(closed: int, silent: int) -> list[tuple[dict[str, str], str, str]]:
    """(variables, the variable the paragraph names, what it must say answered)."""
    store = {"RAG_ASSETS_OBJECT_STORE": "s3://team/rag"}
    return [
        ({"RAY_ADDRESS": f"127.0.0.1:{closed}"}, "RAY_ADDRESS", "Connection refused"),
        ({"RAY_ADDRESS": f"127.0.0.1:{silent}"}, "RAY_ADDRESS", "no gRPC server answered"),
        ({"RAG_ASSETS_DASK_SCHEDULER": f"tcp://127.0.0.1:{closed}"}, "RAG_ASSETS_DASK_SCHEDULER", "Connection refused"),
        ({"RAG_ASSETS_DASK_SCHEDULER": f"tcp://127.0.0.1:{silent}"}, "RAG_ASSETS_DASK_SCHEDULER",
         "did not greet it as a Dask scheduler does within 1 s"),
        ({"DAGSTER_PG_URL": f"postgresql://rag@127.0.0.1:{closed}/rag"}, "DAGSTER_PG_URL", "Connection refused"),
        ({"DAGSTER_PG_URL": f"postgresql://rag@127.0.0.1:{silent}/rag"}, "DAGSTER_PG_URL",
         "did not answer as PostgreSQL within 1 s"),
        ({**store, "RAG_ASSETS_OBJECT_STORE_OPTIONS": json.dumps(
            {"client_kwargs": {"endpoint_url": f"http://127.0.0.1:{closed}"}})}, "RAG_ASSETS_OBJECT_STORE",
         "Connection refused"),
        ({**store, "RAG_ASSETS_OBJECT_STORE_OPTIONS": json.dumps(
            {"key": "k", "secret": "s", "client_kwargs": {"endpoint_url": f"http://127.0.0.1:{silent}"}})},
         "RAG_ASSETS_OBJECT_STORE", "listing team: no answer within 1 s"),
    ]


@pytest.mark.servers
def test_a_setting_that_points_at_nothing_stops_the_command_before_anything_is_written(tmp_path, silent):
    home = tmp_path / "home"
    env = tiny_home_env(home) | {"RAG_ASSETS_CONNECT_TIMEOUT": "1"}
    first = subprocess.run([sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", "wordllama",
                            "--strategies", "boundaries"], env=env, cwd=PROJECT, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    before = home_state(home)
    closed = free_port()
    for variables, variable, answered in cases(closed, silent.port):
        for command in ("evaluate", "backfill --model wordllama"):
            result = subprocess.run([sys.executable, "-m", "rag_assets.cli", *command.split()], env=env | variables,
                                    cwd=PROJECT, capture_output=True, text=True,
                                    timeout=120)  # a guard against a hang, not a speed limit
            case = (command, variables)
            assert result.returncode == 1, (case, result.stderr[-2000:])
            assert "Traceback" not in result.stderr, (case, result.stderr[-3000:])
            [paragraph] = result.stderr.strip().splitlines()
            assert paragraph.startswith(f"rag-assets {command.split()[0]}: {variable}={variables[variable]} ("), (
                case, paragraph)
            assert answered in paragraph and "Nothing ran and no file changed" in paragraph, (case, paragraph)
            assert home_state(home) == before, case  # dagster.yaml included: not rewritten for PostgreSQL


@pytest.mark.servers
def test_readers_ask_only_for_the_servers_they_use(tmp_path):
    settings = Settings(home=tmp_path, scale_out={"ray_address": "127.0.0.1:1", "dask_scheduler": "tcp://h:1"},
                        instance={"postgres_url": "postgresql://u@127.0.0.1:1/x"})
    assert [service.variable for service in configured(settings, needs_cluster=False, needs_instance=False)] == []
    assert [service.variable for service in configured(settings, needs_cluster=True, needs_instance=True)] == [
        "RAY_ADDRESS", "RAG_ASSETS_DASK_SCHEDULER", "DAGSTER_PG_URL"]


@pytest.mark.servers
def test_the_real_servers_answer(tmp_path):
    ray, dask, postgres, s3 = RayHead(cpus=1), DaskCluster(workers=1, env={}), PostgresServer(tmp_path / "pg"), \
        S3Server(tmp_path / "s3.log")
    try:
        settings = Settings(home=tmp_path / "home", scale_out={"ray_address": ray.address},
                            instance={"postgres_url": postgres.url},
                            object_store={"url": s3.url, "options": s3.options})
        services = configured(settings, needs_cluster=True, needs_instance=True)
        assert [service.variable for service in services] == ["RAY_ADDRESS", "DAGSTER_PG_URL",
                                                              "RAG_ASSETS_OBJECT_STORE"]
        assert unreachable(services, 5) == []
        dasked = Settings(home=tmp_path / "home", scale_out={"dask_scheduler": dask.address})
        assert unreachable(configured(dasked, needs_cluster=True, needs_instance=False), 5) == []
        assert not (tmp_path / "home").exists()  # asking writes nothing
    finally:
        for server in (ray, dask, postgres, s3):
            server.stop()
