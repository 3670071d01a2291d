"""The storage folder's shared data on object storage, against a real S3 API server started here
(moto's, on loopback, stopped by its PID): two storage folders stand for two machines of a team
that share one Dagster instance and one bucket. What one machine wrote, the other reads; the
embedding cache crosses machines; the metrics history accumulates in one `metrics.duckdb`; a failed
upload replaces nothing."""

import json

import duckdb
import pyarrow.parquet as pq
import pytest
from dagster import AssetKey, DagsterInstance

from rag_assets.lib.store import object_store as store_module
from rag_assets.lib.store import paths
from rag_assets.lib.store.object_store import ObjectStoreError, object_store, use_object_store
from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import Runner, materialize_all
from rag_assets.runner.failures import RunFailed
from rag_assets.settings import SettingsError, current
from rag_assets_tests.conftest import FIXTURES
from rag_assets_tests.fakes import FakeEmbeddingModels
from rag_assets_tests.servers import S3Server

pytestmark = [pytest.mark.integration, pytest.mark.servers]

MODEL, STRATEGY = "all-MiniLM-L6-v2", "blind"
PARTITION = [("model", MODEL), ("strategy", STRATEGY)]
quiet = lambda _: None  # noqa: E731


@pytest.fixture
def s3(tmp_path, monkeypatch):
    server = S3Server(tmp_path / "s3.log")
    monkeypatch.setenv("RAG_ASSETS_OBJECT_STORE", server.url)
    monkeypatch.setenv("RAG_ASSETS_OBJECT_STORE_OPTIONS", json.dumps(server.options))
    for machine in ("machine-1", "machine-2"):  # as the command line and the resources do for their home
        use_object_store(tmp_path / machine, server.url, server.options)
    try:
        yield server
    finally:
        store_module._filesystems.clear()  # the clients of this server
        server.stop()


def _settings(home) -> RagSettings:
    return RagSettings(home=str(home), corpus_dir=str(FIXTURES / "tiny_corpus"),
                       eval_set=str(FIXTURES / "tiny_needles.jsonl"),
                       out_of_domain=str(FIXTURES / "tiny_out_of_domain.jsonl"), retrievers=["dense", "bm25", "hybrid"])


def _evaluation_runs(home) -> int:
    database = paths.stored_file(home, paths.duckdb_path(home))
    with duckdb.connect(str(database), read_only=True) as connection:
        return connection.execute("SELECT count(*) FROM evaluation_runs").fetchall()[0][0]


def test_two_machines_share_partitions_the_embedding_cache_and_the_metrics_history(s3, tmp_path):
    instance = DagsterInstance.ephemeral()  # the team's one instance (PostgreSQL in production)
    first, second = tmp_path / "machine-1", tmp_path / "machine-2"
    materialize_all(_settings(first), instance, models=FakeEmbeddingModels(), model_keys=[MODEL],
                    strategies=[STRATEGY], progress=quiet)
    keys = s3.keys()
    for relative in ("parquet/extracted_text/data.parquet", "parquet/chunks/strategy=blind/data.parquet",
                     f"parquet/embeddings/model={MODEL}/strategy=blind/data.parquet",
                     f"parquet/retrieval_runs/model={MODEL}/strategy=blind/data.parquet", "metrics.duckdb",
                     "report/index.html"):  # the evaluation page, readable from the bucket
        assert f"rag/{relative}" in keys, keys
    assert any(key.startswith(f"rag/embedding_cache/{MODEL}/") and key.endswith(".parquet") for key in keys), keys
    assert not [key for key in keys if "/." in key], keys  # no temporary or ETag file was uploaded
    materialization = instance.get_latest_materialization_event(AssetKey("embeddings")).asset_materialization
    assert materialization.metadata["dagster/uri"].value == (
        f"s3://team/rag/parquet/embeddings/model={MODEL}/strategy=blind/data.parquet")
    assert _evaluation_runs(first) == 1

    # the other machine has an empty storage folder: it reads the first one's partitions from the bucket
    assert not second.exists()
    Runner(_settings(second), instance, FakeEmbeddingModels(), quiet).run("evaluation_metrics")
    for asset in ("retrieval_runs", "embeddings"):  # fetched to be read (runs and token counts)
        assert paths.partition_path(second, asset, PARTITION).exists()
    assert _evaluation_runs(second) == 2 and _evaluation_runs(first) == 2  # one history, appended from both

    # rebuilding the partition there embeds nothing: the first machine's vectors are in the bucket's cache
    outcome = Runner(_settings(second), instance, FakeEmbeddingModels(), quiet, rebuild=True)
    outcome.model_partitions(MODEL, [STRATEGY])
    event = instance.get_latest_materialization_event(AssetKey("embeddings"))
    metadata = {key: value.value for key, value in event.asset_materialization.metadata.items()}
    assert metadata["texts_embedded"] == 0 and metadata["texts_reused"] == metadata["chunks"] > 0, metadata
    same = [pq.read_table(paths.stored_partition(home, "embeddings", PARTITION)) for home in (first, second)]
    assert same[0].equals(same[1])


class OtherWeights(FakeEmbeddingModels):
    """The fake model with other weights: the same vectors, another revision in every row it writes."""

    def get(self, key: str):
        embedder = super().get(key)
        embedder.revision = "hashing-2"
        return embedder

    def installed_revision(self, key: str) -> str:
        return "hashing-2"


def test_a_failed_upload_replaces_nothing_there_or_here(s3, tmp_path, monkeypatch):
    home, instance = tmp_path / "home", DagsterInstance.ephemeral()
    materialize_all(_settings(home), instance, models=FakeEmbeddingModels(), model_keys=[MODEL],
                    strategies=[STRATEGY], progress=quiet)
    stored = paths.partition_path(home, "embeddings", PARTITION)
    key = f"rag/parquet/embeddings/model={MODEL}/strategy=blind/data.parquet"
    before = (stored.read_bytes(), s3.client().head_object(Bucket="team", Key=key)["ETag"])
    store = object_store(home)

    original = store.fs.put_file

    def broken(source, target, **kwargs):  # the embeddings partition's upload fails; the rest go through
        if "/parquet/embeddings/" in target:
            raise ConnectionError("the connection was reset")
        return original(source, target, **kwargs)

    monkeypatch.setattr(store.fs, "put_file", broken)
    # the rebuild writes other bytes (other weights: another revision in every row), so a partition that
    # replaced the good one anywhere would show
    with pytest.raises(RunFailed, match=r"cannot upload data\.parquet to s3://team/rag/parquet/embeddings/.*"
                                        r"the connection was reset.*nothing was replaced"):
        materialize_all(_settings(home), instance, models=OtherWeights(), model_keys=[MODEL],
                        strategies=[STRATEGY], progress=quiet, rebuild=True)
    assert (stored.read_bytes(), s3.client().head_object(Bucket="team", Key=key)["ETag"]) == before
    assert not list(paths.staging_dir(home).iterdir())
    assert not [path for path in stored.parent.iterdir() if path.name.endswith(".tmp")]


def test_a_copy_is_downloaded_again_only_when_its_object_changed(s3, tmp_path, monkeypatch):
    first, second = tmp_path / "machine-1", tmp_path / "machine-2"  # the homes the fixture gave the store
    local_one, local_two = first / "parquet" / "x" / "data.parquet", second / "parquet" / "x" / "data.parquet"
    local_one.parent.mkdir(parents=True)
    staged = local_one.with_name(".staged")
    staged.write_bytes(b"version 1")
    object_store(first).publish(staged, local_one)
    assert not staged.exists() and local_one.read_bytes() == b"version 1"
    store_two = object_store(second)
    downloads = []
    original = store_two.fs.get_file
    monkeypatch.setattr(store_two.fs, "get_file", lambda *args, **kwargs: (downloads.append(args[0]),
                                                                           original(*args, **kwargs)))
    assert store_two.fetch(local_two) and store_two.fetch(local_two)
    assert local_two.read_bytes() == b"version 1" and len(downloads) == 1
    staged.write_bytes(b"version 2, from the first machine")
    object_store(first).publish(staged, local_one)
    assert store_two.fetch(local_two) and local_two.read_bytes() == b"version 2, from the first machine"
    assert len(downloads) == 2
    assert store_two.files(second / "parquet", "/data.parquet") == [local_two]
    assert not store_two.fetch(second / "parquet" / "y" / "data.parquet")  # no object: nothing to fetch


def test_the_store_is_refused_with_what_is_wrong(monkeypatch, tmp_path):
    monkeypatch.delenv("RAG_ASSETS_OBJECT_STORE", raising=False)
    assert object_store(tmp_path) is None  # none given: the storage folder alone
    monkeypatch.setenv("RAG_ASSETS_OBJECT_STORE", "s3://team/rag")
    monkeypatch.setenv("RAG_ASSETS_OBJECT_STORE_OPTIONS", "{not json")
    with pytest.raises(SettingsError, match="RAG_ASSETS_OBJECT_STORE_OPTIONS=.*is not JSON"):
        current()
    monkeypatch.setenv("RAG_ASSETS_OBJECT_STORE_OPTIONS", "[1]")
    with pytest.raises(SettingsError, match="must be a JSON object"):
        current()
    use_object_store(tmp_path, "nosuchscheme://team/rag", {})
    with pytest.raises(ObjectStoreError, match="RAG_ASSETS_OBJECT_STORE=nosuchscheme://team/rag"):
        object_store(tmp_path)
    use_object_store(tmp_path, "", {})
