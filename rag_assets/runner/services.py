"""The servers a setting points at, each asked once before a command runs anything.

``RAY_ADDRESS``, ``RAG_ASSETS_DASK_SCHEDULER``, ``DAGSTER_PG_URL`` and ``RAG_ASSETS_OBJECT_STORE`` name
servers that a run would otherwise meet only deep inside a step, where each client retries on its own
schedule (Ray printed reconnect lines for minutes; Dask took 90 s to fail; Dagster's PostgreSQL storage
retried for 26 s after the home's dagster.yaml had already been rewritten). ``unreachable`` asks each
configured server within ``connect_timeout`` seconds (``RAG_ASSETS_CONNECT_TIMEOUT``) and returns one
paragraph per server that did not answer: the setting, the address, and what answered instead. Nothing
is written anywhere while it asks.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from rag_assets.lib.store.team_database import masked_url, scrubbed, secrets_of
from rag_assets.settings import Settings

RAY_CURRENT_CLUSTER = Path("/tmp/ray/ray_current_cluster")  # where Ray's 'auto' finds the local cluster


class ServiceUnreachable(RuntimeError):
    """A server a setting names did not answer; one paragraph per server, printed as it is."""

    paragraph = True


def check(settings: Settings, runs_the_graph: bool) -> None:
    """ServiceUnreachable unless every server this command would use answers within the timeout."""
    problems = unreachable(configured(settings, needs_cluster=runs_the_graph, needs_instance=runs_the_graph),
                           settings.scale_out.connect_timeout)
    if problems:
        raise ServiceUnreachable("\n".join(problems))


@dataclass(frozen=True)
class Service:
    variable: str  # the environment variable a person set
    address: str  # as they wrote it
    what: str  # what the server is for, in words
    ask: Callable[[float], str | None]  # within the timeout: None when it answered, else what happened


def tcp_answer(host: str, port: int, timeout: float, greets: bool = False) -> str | None:
    """None when a server answers at host:port within ``timeout`` s, else what happened. ``greets`` asks
    for more than an open port (a proxy or a firewall may accept any connection): a server that talks as
    soon as a client connects, as Dask's scheduler does (its comm handshake)."""
    try:
        connection = socket.create_connection((host, port), timeout=timeout)
    except socket.timeout:
        return f"nothing answered at {host}:{port} within {timeout:g} s"
    except socket.gaierror as error:
        return f"the host name {host!r} is not known ({error.strerror})"
    except OSError as error:
        return f"{host}:{port} answered: {error.strerror or error}"
    with connection:
        if not greets:
            return None
        try:
            received = connection.recv(1)
        except socket.timeout:
            return (f"something at {host}:{port} accepted the connection but did not greet it as a Dask scheduler "
                    f"does within {timeout:g} s")
        except OSError as error:
            return f"{host}:{port} accepted the connection, then: {error.strerror or error}"
        return None if received else f"{host}:{port} closed the connection at once"


def host_port(address: str, default_port: int | None = None) -> tuple[str, int]:
    """(host, port) of ``host:port``, ``scheme://host:port/...`` or ``[v6]:port``; ValueError if it has none."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if not parts.hostname:
        raise ValueError("it names no host")
    port = parts.port or default_port
    if port is None:
        raise ValueError("it names no port")
    return parts.hostname, port


def _tcp(address: str, default_port: int | None = None, greets: bool = False) -> Callable[[float], str | None]:
    def ask(timeout: float) -> str | None:
        try:
            host, port = host_port(address, default_port)
        except ValueError as error:
            return f"the address cannot be read: {error}"
        return tcp_answer(host, port, timeout, greets)
    return ask


def _ray(address: str) -> Callable[[float], str | None]:
    def ask(timeout: float) -> str | None:
        target = address
        if address == "auto":
            try:
                target = RAY_CURRENT_CLUSTER.read_text().strip()
            except OSError:
                return f"no Ray cluster runs on this machine ('auto' looks for {RAY_CURRENT_CLUSTER}; start one " \
                       "with 'ray start --head')"
        target = target.removeprefix("ray://")
        refused = _tcp(target)(timeout)
        return refused or grpc_answer(target, timeout)
    return ask


def grpc_answer(address: str, timeout: float) -> str | None:
    """None when a gRPC server (Ray's GCS, or its client server) answers a call at ``address`` within
    ``timeout`` s, whatever status it gives (an unknown method, a missing token: it is a gRPC server);
    else what answered instead: nothing, or an HTTP server (a proxy accepts any connection)."""
    try:
        import grpc
    except ImportError:
        return None  # Ray is not installed: the embedding step says so
    with grpc.insecure_channel(address) as channel:
        call = channel.unary_unary("/ray.rpc.NodeInfoGcsService/CheckAlive", request_serializer=bytes,
                                   response_deserializer=bytes)
        try:
            call(b"", timeout=timeout)
        except grpc.RpcError as error:
            details = (error.details() or "").splitlines()[0] if error.details() else ""
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                return f"no gRPC server answered at {address} within {timeout:g} s ({details})"
            if "http2 header with status" in details:
                return f"an HTTP server, not Ray's gRPC one, answered at {address} ({details})"
    return None


def _postgres(url: str) -> Callable[[float], str | None]:
    def ask(timeout: float) -> str | None:
        try:
            from sqlalchemy.engine import make_url

            parsed = make_url(url)
        except Exception as error:  # noqa: BLE001 - SQLAlchemy's own words are the answer
            return f"the URL cannot be read: {scrubbed(str(error), secrets_of(url))}"
        refused = tcp_answer(parsed.host or "localhost", parsed.port or 5432, timeout)
        if refused:
            return refused
        try:
            import psycopg2
        except ImportError:
            return None  # the server accepts connections; the postgres extra's absence is told when it is used
        try:
            psycopg2.connect(host=parsed.host or "localhost", port=parsed.port or 5432, user=parsed.username,
                             password=parsed.password, dbname=parsed.database,
                             connect_timeout=max(1, round(timeout))).close()
        except psycopg2.Error as error:
            said = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            if said.endswith("timeout expired"):
                return f"something accepted the connection but did not answer as PostgreSQL within {timeout:g} s"
            return f"PostgreSQL answered: {scrubbed(said, secrets_of(url))}"
        return None
    return ask


def _object_store(url: str, options: dict, home: Path) -> Callable[[float], str | None]:
    def ask(timeout: float) -> str | None:
        endpoint = (options.get("client_kwargs") or {}).get("endpoint_url") or options.get("endpoint_url")
        if endpoint:
            refused = _tcp(endpoint, 443 if endpoint.startswith("https") else 80)(timeout)
            if refused:
                return f"its endpoint {endpoint}: {refused}"
        from rag_assets.lib.store.object_store import ObjectStore, ObjectStoreError

        try:
            store = ObjectStore(url, home, options)
        except ObjectStoreError as error:
            return str(error)
        bucket = store.root.split("/")[0] or store.root
        answer = _within(timeout, lambda: store.fs.ls(bucket, detail=False))
        return answer and f"listing {bucket}: {answer}"
    return ask


def _within(timeout: float, call: Callable[[], object]) -> str | None:
    """Runs ``call`` on a thread; None when it returned in time, else the error or the wait."""
    outcome: dict[str, BaseException | None] = {}

    def run() -> None:
        try:
            call()
            outcome["error"] = None
        except BaseException as error:  # noqa: BLE001 - reported in words
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True, name="service-check")
    worker.start()
    worker.join(timeout)
    if "error" not in outcome:
        return f"no answer within {timeout:g} s"
    error = outcome["error"]
    return None if error is None else f"it answered: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"


def configured(settings: Settings, needs_cluster: bool, needs_instance: bool) -> list[Service]:
    """The servers the settings name that this command would use."""
    services = []
    ray, dask = settings.scale_out.ray_address.strip(), settings.scale_out.dask_scheduler.strip()
    if needs_cluster and ray and ray != "local":
        services.append(Service("RAY_ADDRESS", ray, "the Ray cluster that embeds", _ray(ray)))
    if needs_cluster and dask and not dask.startswith("inproc://"):
        services.append(Service("RAG_ASSETS_DASK_SCHEDULER", dask, "the Dask scheduler that embeds",
                                _tcp(dask, greets=True)))
    postgres = settings.instance.postgres_url.strip()
    if needs_instance and postgres:
        services.append(Service("DAGSTER_PG_URL", masked_url(postgres), "the Dagster instance's storage",
                                _postgres(postgres)))
    store = settings.object_store.url.strip()
    if store:
        services.append(Service("RAG_ASSETS_OBJECT_STORE", store, "the object store holding the shared data",
                                _object_store(store, settings.object_store.options, settings.home)))
    return services


def unreachable(services: list[Service], timeout: float) -> list[str]:
    """One paragraph per service that did not answer within ``timeout`` s (they are asked at once)."""
    answers: dict[int, str | None] = {}
    threads = [threading.Thread(target=lambda i=i, s=s: answers.__setitem__(i, s.ask(timeout)), daemon=True)
               for i, s in enumerate(services)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout + 2)  # each ask is bounded by the timeout itself; this is the guard of last resort
    problems = []
    for number, service in enumerate(services):
        answer = answers.get(number, f"no answer within {timeout:g} s")
        if answer:
            problems.append(f"{service.variable}={service.address} ({service.what}): {answer}. Nothing ran and no "
                            f"file changed; start the server, correct {service.variable}, or unset it "
                            f"(RAG_ASSETS_CONNECT_TIMEOUT={timeout:g} s sets how long each is given).")
    return problems

