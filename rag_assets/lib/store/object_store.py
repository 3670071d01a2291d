"""The storage folder's shared data on object storage, for a team whose steps run on more than one
machine: every Parquet partition, the embedding and token caches, and ``metrics.duckdb``.

``RAG_ASSETS_OBJECT_STORE`` names the place, as a URL fsspec understands: ``s3://bucket/prefix``
(``pip install -e '.[objectstore]'``; ``gs://`` and ``az://`` with gcsfs or adlfs installed).
``RAG_ASSETS_OBJECT_STORE_OPTIONS`` is a JSON object passed to the filesystem, for instance
``{"client_kwargs": {"endpoint_url": "http://minio:9000"}}``; credentials are read as the filesystem
reads them (for S3: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, a profile, an instance role).

The object store holds the truth; each machine's storage folder holds a copy of what it read or
wrote, at the same relative path, and beside each copy the ETag of the object it copies
(``.<name>.etag``):

- **writing** a file: it is complete on the local disk (a temporary name) before it is uploaded, in
  one PUT or in a multipart upload that is aborted when it fails, so the object is replaced whole or
  not at all; the local copy is renamed into place after the upload succeeded. A failed upload
  changes neither.
- **reading** a file: one HEAD request; a copy whose recorded ETag differs from the object's is
  downloaded again (to a temporary name, then renamed).
- **listing** a folder (an asset's partitions, a cache's shards) lists the objects, not the local
  folder: what another machine wrote is found, and a cache shard merged away elsewhere is dropped.

Nothing here runs without the variable: the storage folder alone is the default.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

STORE_ENV_VAR = "RAG_ASSETS_OBJECT_STORE"  # the setting object_store.url (rag_assets.settings), named in errors

_filesystems: dict[tuple[str, str], tuple[object, str]] = {}


class ObjectStoreError(RuntimeError):
    """Object storage refused or failed an operation: names the object and what it said."""


class ObjectStore:
    """The objects under ``url`` as the copy of the storage folder ``home``: a file at
    ``home/<relative>`` is the object ``<url>/<relative>``."""

    def __init__(self, url: str, home: Path, options: dict | None = None) -> None:
        self.url, self.home = url.rstrip("/"), Path(home)
        key = (self.url, json.dumps(options or {}, sort_keys=True))
        if key not in _filesystems:  # one client per place and options, reused by every store of them
            try:
                import fsspec
            except ImportError as error:
                raise ObjectStoreError(f"{STORE_ENV_VAR}={url} needs fsspec and its filesystem for that scheme: "
                                       "pip install -e '.[objectstore]' (s3fs)") from error
            try:
                _filesystems[key] = fsspec.core.url_to_fs(self.url, **(options or {}))
            except (ImportError, ValueError) as error:
                raise ObjectStoreError(f"{STORE_ENV_VAR}={url}: {error}") from error
        self.fs, self.root = _filesystems[key]

    def key(self, local: Path) -> str:
        """The object of the local file ``local`` (a path under the storage folder)."""
        try:
            relative = Path(local).resolve().relative_to(self.home.resolve())
        except ValueError:
            raise ObjectStoreError(f"{local} is not under the storage folder {self.home}") from None
        return f"{self.root.rstrip('/')}/{relative.as_posix()}"

    def uri(self, local: Path) -> str:
        return self.fs.unstrip_protocol(self.key(local))

    def publish(self, source: Path, local: Path) -> None:
        """Uploads the complete file ``source`` as the object of ``local``, then renames ``source``
        to ``local``. Nothing changes, remotely or here, when the upload fails."""
        key = self.key(local)
        try:
            self.fs.put_file(str(source), key)
            etag = self._etag(key)
        except Exception as error:
            raise ObjectStoreError(f"cannot upload {local.name} to {self.fs.unstrip_protocol(key)} ({error}); "
                                   "nothing was replaced there or here") from error
        os.replace(source, local)
        _etag_file(local).write_text(etag)

    def fetch(self, local: Path) -> bool:
        """Brings ``local`` up to date with its object; False when there is no object (``local``
        is then left as it is)."""
        key = self.key(local)
        try:
            etag = self._etag(key)
        except FileNotFoundError:
            return False
        except Exception as error:
            raise ObjectStoreError(f"cannot read {self.fs.unstrip_protocol(key)} ({error})") from error
        recorded = _etag_file(local)
        if local.exists() and recorded.exists() and recorded.read_text() == etag:
            return True
        local.parent.mkdir(parents=True, exist_ok=True)
        temporary = local.with_name(f".{local.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.download")
        try:
            self.fs.get_file(key, str(temporary))
            os.replace(temporary, local)
        except Exception as error:
            raise ObjectStoreError(f"cannot download {self.fs.unstrip_protocol(key)} ({error})") from error
        finally:
            temporary.unlink(missing_ok=True)
        recorded.write_text(etag)
        return True

    def files(self, folder: Path, suffix: str) -> list[Path]:
        """The local paths of the objects under ``folder`` whose names end with ``suffix``, at any
        depth (not fetched)."""
        prefix = self.key(folder)
        self.fs.invalidate_cache(prefix)  # fsspec caches listings; another machine may have written since
        try:
            found = self.fs.find(prefix)
        except FileNotFoundError:
            return []
        except Exception as error:
            raise ObjectStoreError(f"cannot list {self.fs.unstrip_protocol(prefix)} ({error})") from error
        base = prefix.rstrip("/") + "/"
        return sorted(Path(folder) / name[len(base):] for name in (self.fs._strip_protocol(f) for f in found)
                      if name.startswith(base) and name.endswith(suffix) and not Path(name).name.startswith("."))

    def is_copy(self, local: Path) -> bool:
        """Whether ``local`` was uploaded from here or downloaded (it has a recorded ETag)."""
        return _etag_file(local).exists()

    def drop_copy(self, local: Path) -> None:
        """Removes the local copy ``local`` and its ETag (not the object)."""
        local.unlink(missing_ok=True)
        _etag_file(local).unlink(missing_ok=True)

    def remove(self, local: Path) -> None:
        """Removes the object of ``local`` and the local copy's ETag (not the copy itself)."""
        try:
            self.fs.rm_file(self.key(local))
        except FileNotFoundError:
            pass
        except Exception as error:
            raise ObjectStoreError(f"cannot remove {self.uri(local)} ({error})") from error
        _etag_file(local).unlink(missing_ok=True)

    def _etag(self, key: str) -> str:
        self.fs.invalidate_cache(key)
        info = self.fs.info(key)
        if info.get("type") == "directory":
            raise FileNotFoundError(key)
        # S3, GCS and Azure give an ETag; other filesystems their size and modification time
        return str(info.get("ETag") or info.get("etag") or f"{info.get('size')}:{info.get('mtime') or info.get('LastModified')}")


def publish(store: ObjectStore | None, source: Path, local: Path) -> None:
    """Makes the complete file ``source`` the stored file ``local``: a rename, after an upload to
    ``store`` when there is one (a failed upload replaces nothing)."""
    if store is None:
        os.replace(source, local)
    else:
        store.publish(source, local)


def _etag_file(local: Path) -> Path:
    return local.with_name(f".{local.name}.etag")


_configured: dict[str, tuple[str, dict]] = {}


def use_object_store(home: Path, url: str, options: dict) -> None:
    """Make ``url`` (the ``object_store`` settings, or a run's config; '' for none) the object store of the
    storage folder ``home`` in this process: called by whoever holds the settings (the Dagster resources
    when a step starts, the command line before a command runs), never read from the settings here."""
    _configured[str(Path(home).resolve())] = (url.strip(), dict(options))


def object_store(home: Path) -> ObjectStore | None:
    """The object store ``use_object_store`` gave ``home``, as its copy; None when none was given."""
    url, options = _configured.get(str(Path(home).resolve()), ("", {}))
    return ObjectStore(url, home, options) if url else None
