"""The Parquet IO manager takes a file an asset wrote itself (the embeddings, in row groups): it is
checked against the schema and renamed into place; one that fails the check, or a run that fails
while writing it, leaves the last good partition and nothing under the staging folder."""

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dagster import DagsterInstance

from rag_assets.lib.store import paths
from rag_assets.lib.store.paths import StagedParquet
from rag_assets.lib.store.schemas import SchemaError
from rag_assets.resources import ParquetIOManager, RagSettings
from rag_assets.runner.evaluation import materialize_all
from rag_assets.runner.failures import RunFailed
from rag_assets_tests.conftest import FIXTURES
from rag_assets_tests.fakes import FakeEmbeddingModels, HashingEmbedder

pytestmark = pytest.mark.integration


class FailingEmbedder(HashingEmbedder):
    """Other weights (nothing of them is cached) that fail when they embed."""

    revision = "failing-1"

    def embed(self, texts):
        raise RuntimeError("the model failed while embedding")


class FailingModels(FakeEmbeddingModels):
    def get(self, key: str) -> HashingEmbedder:
        return FailingEmbedder(key)

    def installed_revision(self, key: str) -> str:
        return FailingEmbedder.revision


def _settings(home) -> RagSettings:
    return RagSettings(home=str(home), corpus_dir=str(FIXTURES / "tiny_corpus"),
                       eval_set=str(FIXTURES / "tiny_needles.jsonl"),
                       out_of_domain=str(FIXTURES / "tiny_out_of_domain.jsonl"), retrievers=["dense", "bm25"])


def test_a_run_that_fails_while_writing_embeddings_leaves_the_last_good_partition(tmp_path):
    home, instance = tmp_path / "home", DagsterInstance.ephemeral()
    quiet = lambda _: None  # noqa: E731
    materialize_all(_settings(home), instance, models=FakeEmbeddingModels(), model_keys=["all-MiniLM-L6-v2"],
                    strategies=["blind"], progress=quiet)
    stored = paths.partition_path(home, "embeddings", [("model", "all-MiniLM-L6-v2"), ("strategy", "blind")])
    assert pq.ParquetFile(stored).metadata.num_row_groups >= 1
    before = stored.read_bytes()
    with pytest.raises(RunFailed, match="the model failed while embedding"):
        materialize_all(_settings(home), instance, models=FailingModels(), model_keys=["all-MiniLM-L6-v2"],
                        strategies=["blind"], progress=quiet, rebuild=True)
    assert stored.read_bytes() == before
    assert not list(paths.staging_dir(home).iterdir())  # neither the staged file nor the scratch vectors


@pytest.mark.parametrize("where", ["scratch", "partition"])
def test_a_full_disk_while_embedding_names_the_path_and_leaves_the_last_good_partition(tmp_path, monkeypatch, where):
    import errno

    from rag_assets.lib.embed import partition as embedding_rows

    home, instance = tmp_path / "home", DagsterInstance.ephemeral()
    quiet = lambda _: None  # noqa: E731
    materialize_all(_settings(home), instance, models=FakeEmbeddingModels(), model_keys=["all-MiniLM-L6-v2"],
                    strategies=["blind"], progress=quiet)
    stored = paths.partition_path(home, "embeddings", [("model", "all-MiniLM-L6-v2"), ("strategy", "blind")])
    before = stored.read_bytes()

    def full(*_):
        raise OSError(errno.ENOSPC, "No space left on device")

    if where == "scratch":  # reserving the vectors' scratch file
        monkeypatch.setattr(embedding_rows.os, "posix_fallocate", full)
    else:  # after the staged partition file was opened and its first row group written

        class FullAfterOneRowGroup(pq.ParquetWriter):
            def write_table(self, table, row_group_size=None):
                super().write_table(table, row_group_size)
                full()

        monkeypatch.setattr(embedding_rows.pq, "ParquetWriter", FullAfterOneRowGroup)
    with pytest.raises(RunFailed, match=r"no space left on device writing '[^']*/home/staging/\.(vectors|embeddings)"):
        materialize_all(_settings(home), instance, models=FakeEmbeddingModels(), model_keys=["all-MiniLM-L6-v2"],
                        strategies=["blind"], progress=quiet, rebuild=True)
    assert stored.read_bytes() == before
    assert not list(paths.staging_dir(home).iterdir())


def test_a_staged_file_that_fails_the_schema_is_discarded_and_the_last_good_file_stays(tmp_path):
    good = tmp_path / "parquet" / "embeddings" / "data.parquet"
    good.parent.mkdir(parents=True)
    good.write_bytes(b"the last good file")
    staged = StagedParquet(tmp_path, "embeddings")
    pq.write_table(pa.table({"chunk_id": ["a"]}), staged.path)
    with pytest.raises(SchemaError, match=r"embeddings: columns \['chunk_id'\] differ"):
        ParquetIOManager(home=str(tmp_path))._move_in("embeddings", staged, good)
    assert good.read_bytes() == b"the last good file" and not staged.path.exists()


def test_staging_removes_what_dead_processes_of_this_host_left(tmp_path):
    import socket
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()  # a pid that has ended
    folder = paths.staging_dir(tmp_path)
    folder.mkdir(parents=True)
    host = socket.gethostname()
    left = folder / f".embeddings.{host}.{dead}.abc.parquet"
    live = folder / f".embeddings.{host}.{os.getpid()}.def.parquet"
    other_host = folder / f".embeddings.elsewhere.{dead}.ghi.parquet"
    for path in (left, live, other_host):
        path.write_bytes(b"staged")
    staged = StagedParquet(tmp_path, "embeddings")
    assert not left.exists() and live.exists() and other_host.exists()
    assert staged.path.parent == folder and f".{host}.{os.getpid()}." in staged.path.name


def test_the_decision_rule_carries_the_resources_margin_budget_and_adjustment():
    from rag_assets.resources import DecisionSettings

    rule = RagSettings(home="/tmp/h", decision=DecisionSettings(budget=512, budgets=[256, 512], adjustment="bh",
                                                               margin=0.1)).decision_rule()
    assert (rule.budget, rule.budgets, rule.adjustment, rule.margin) == (512, (256, 512), "bh", 0.1)
    assert RagSettings(home="/tmp/h").decision_rule().margin == 0.05
