"""The storage folder's copy of object storage, with a local folder as the bucket (fsspec's
``file://``): what a failed upload leaves behind. test_object_store.py does the same against a real
S3 API server."""

import pytest

from rag_assets.lib.store import object_store as store_module
from rag_assets.lib.store.object_store import ObjectStore, ObjectStoreError


def _files(folder):
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def test_a_failed_upload_replaces_nothing_in_the_bucket_or_the_storage_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "_filesystems", {})  # no client of this bucket outlives the test
    bucket, home = tmp_path / "bucket", tmp_path / "home"
    bucket.mkdir()
    store = ObjectStore(f"file://{bucket}", home, {"auto_mkdir": True})
    local = home / "parquet" / "embeddings" / "data.parquet"
    local.parent.mkdir(parents=True)
    staging = home / "staging"
    staging.mkdir()
    (staging / "first").write_bytes(b"the good partition")
    store.publish(staging / "first", local)
    before = _files(bucket), _files(local.parent)
    assert before[0] == {"parquet/embeddings/data.parquet": b"the good partition"}
    assert local.read_bytes() == b"the good partition" and store.is_copy(local)

    def broken(source, target, **kwargs):
        raise ConnectionError("the connection was reset")

    (staging / "second").write_bytes(b"other bytes that must not land anywhere")
    with monkeypatch.context() as patched, pytest.raises(
            ObjectStoreError, match=r"cannot upload data\.parquet to file://.*/parquet/embeddings/data\.parquet "
                                    r"\(the connection was reset\); nothing was replaced") as raised:
        patched.setattr(store.fs, "put_file", broken)
        store.publish(staging / "second", local)
    assert isinstance(raised.value.__cause__, ConnectionError)
    # the object, the local copy and its ETag are the good ones; no other file appeared, there or here
    assert (_files(bucket), _files(local.parent)) == before
    assert local.read_bytes() == b"the good partition"
    # the copy still matches its object: reading it downloads nothing
    downloads = []
    monkeypatch.setattr(store.fs, "get_file", lambda *args, **kwargs: downloads.append(args))
    assert store.fetch(local) and downloads == [] and local.read_bytes() == b"the good partition"
