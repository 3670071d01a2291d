"""Where rag_assets writes its outputs, and how a stored output is read back and published.

All outputs live under one storage folder: the ``home`` setting (``$RAG_ASSETS_HOME``), or
``storage/`` in the project (ignored by git). Nothing is written to the current directory.
"""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from rag_assets.lib.store.names import inside
from rag_assets.lib.store.object_store import object_store
from rag_assets.lib.store.object_store import publish as publish_to


def duckdb_path(home: Path) -> Path:
    return home / "metrics.duckdb"


def parquet_root(home: Path) -> Path:
    return home / "parquet"


def onnx_dir(home: Path) -> Path:
    return home / "onnx"


def dagster_home(home: Path) -> Path:
    return home / "dagster"


def caches_dir(home: Path) -> Path:
    """Where the libraries keep their caches (matplotlib's, onnxruntime's, PyTorch's): kept between runs."""
    return home / "caches"


def scratch_dir(home: Path) -> Path:
    """The temporary folders of the processes that work on the storage folder, one each (``<host>.<pid>``)."""
    return home / "tmp"


def keep_scratch_in(home: Path) -> Path | None:
    """The libraries' caches and this process's temporary files inside the storage folder
    (``environment.keep_scratch_in``): ``caches/`` and ``tmp/<host>.<pid>/``."""
    from rag_assets.environment import keep_scratch_in as keep

    return keep(caches_dir(home), scratch_dir(home), pid_alive)


def staging_dir(home: Path) -> Path:
    """Where an asset that writes its own Parquet (in row groups, not from one table in memory)
    stages the file until the IO manager renames it into place: on the partitions' filesystem."""
    return home / "staging"


class StagedParquet:
    """A Parquet file an asset wrote under the staging folder, for the IO manager to move into its
    partition's place (a rename: readers see the old file or the new one). The name carries the host
    and process that write it: ``.<asset>.<host>.<pid>.<id>.parquet``. Staging one first removes what
    dead processes of this host left (a run killed while writing)."""

    def __init__(self, home: Path, asset: str) -> None:
        import socket
        import uuid

        folder = staging_dir(Path(home))
        folder.mkdir(parents=True, exist_ok=True)
        self.host = socket.gethostname()
        for left in folder.glob(f".*.{self.host}.*.parquet"):
            pid = left.name.split(".")[-3]
            if pid.isdigit() and not pid_alive(int(pid)):
                left.unlink(missing_ok=True)
        self.asset = asset
        self.path = folder / f".{asset}.{self.host}.{os.getpid()}.{uuid.uuid4().hex}.parquet"

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)


def pid_alive(pid: int, command_contains: bytes | None = None) -> bool:
    """Whether a process of this machine with this id runs (another user's counts); with
    ``command_contains``, also whether its command line holds those bytes, so that a pid the system
    gave to another program since (or a zombie, whose command line is empty) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    if command_contains is None:
        return True
    try:
        return command_contains in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def partition_path(home: Path, asset: str, dimensions: list[tuple[str, str]] | None = None) -> Path:
    """The Parquet file of one partition: ``<asset>/<dim>=<key>/.../data.parquet`` (Hive layout)."""
    return inside(parquet_root(home), asset, *(f"{name}={key}" for name, key in dimensions or []), "data.parquet")


def partition_files(home: Path, asset: str) -> list[Path]:
    """Every materialised partition file of an asset, in path order (Hive layout, see ``rag_assets.resources.ParquetIOManager``). With
    an object store, the partitions it holds, each brought up to date here first."""
    store = object_store(home)
    if store is None:
        return sorted((parquet_root(home) / asset).rglob("data.parquet"))
    files = store.files(parquet_root(home) / asset, "/data.parquet")
    for file in files:
        store.fetch(file)
    return files


def stored_file(home: Path, local: Path) -> Path:
    """``local``, a stored output under the storage folder, brought up to date from the object store
    first when one is configured."""
    store = object_store(home)
    if store is not None:
        store.fetch(local)
    return local


def stored_database(home: Path) -> Path:
    """``metrics.duckdb``, up to date with the object store (``stored_file``)."""
    return stored_file(home, duckdb_path(home))


def stored_partition(home: Path, asset: str, dimensions: list[tuple[str, str]] | None = None) -> Path:
    """The local file of a stored partition, up to date with the object store (``stored_file``)."""
    return stored_file(home, partition_path(home, asset, dimensions))


def publish(home: Path, source: Path, local: Path) -> None:
    """Makes the complete file ``source`` the stored output ``local``: a rename, after an upload to
    the object store when one is configured (a failed upload replaces nothing)."""
    publish_to(object_store(home), source, local)


def stored_uri(home: Path, local: Path) -> str:
    """Where a stored output lives for good: its object's URL, or the local file's."""
    store = object_store(home)
    return store.uri(local) if store is not None else Path(local).resolve().as_uri()


class DamagedOutput(RuntimeError):
    """A stored Parquet file that cannot be read (truncated, overwritten): names it and its rebuild."""

    paragraph = True  # the message says all there is to say: the CLI prints it as it is


def rebuild_command(asset: str, dimensions: list[tuple[str, str]] | None) -> str:
    """The command that writes this asset's partition again."""
    keys = dict(dimensions or [])
    if "model" in keys:
        return f"rag-assets backfill --model {keys['model']}" + (
            f" --strategies {keys['strategy']}" if "strategy" in keys else "")
    return "rag-assets evaluate --rebuild" + (f" --strategies {keys['strategy']}" if "strategy" in keys else "")


def dimensions_of_path(home: Path, asset: str, path: Path) -> list[tuple[str, str]]:
    """The (dimension, key) pairs of a partition file, from its Hive folders."""
    folders = path.parent.relative_to(parquet_root(home) / asset).parts
    return [tuple(folder.split("=", 1)) for folder in folders if "=" in folder]


def check_readable(path: Path, asset: str, dimensions: list[tuple[str, str]] | None = None) -> None:
    """Raise DamagedOutput when a stored Parquet file's footer cannot be read."""
    read_stored(path, asset, dimensions, metadata_only=True)


def read_stored(path: Path, asset: str, dimensions: list[tuple[str, str]] | None = None,
                metadata_only: bool = False):
    """A stored output (a pyarrow Table), or DamagedOutput naming the file and the command that
    rebuilds it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_metadata(path) if metadata_only else pq.ParquetFile(path).read()  # not read_table: its
        # dataset layer imports pandas, half a second of a cold `ask`
    except (pa.ArrowInvalid, OSError) as error:
        if isinstance(error, FileNotFoundError):
            raise
        where = ", ".join(f"{d}={k}" for d, k in dimensions or []) or "unpartitioned"
        raise DamagedOutput(f"the stored {asset} ({where}) at {path} cannot be read ({error}); it is damaged "
                            f"(truncated or overwritten). Rebuild it: {rebuild_command(asset, dimensions)}") from error


@contextmanager
def full_disk_named(path: Path) -> Iterator[None]:
    """Re-raise a full disk met while writing ``path`` as ENOSPC naming that path (pyarrow and DuckDB
    often say only "No space left on device")."""
    try:
        yield
    except Exception as error:  # an OSError from pyarrow, or DuckDB's IOException, which is not one
        if getattr(error, "errno", None) == errno.ENOSPC or "No space left on device" in str(error):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from error
        raise
