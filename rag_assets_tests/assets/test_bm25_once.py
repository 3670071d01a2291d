"""BM25 uses no embedding model: through the graph it is run once per strategy (``lexical_runs``), not once per
model, recorded once under its own name, and every model's hybrid fuses that one ranking; a changed BM25
parameter shows its partitions stale in Dagster's own status."""

from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from dagster import AssetKey, DagsterInstance

from rag_assets.dagster_compat import stale_status_resolver
from rag_assets.definitions import build_definitions
from rag_assets.lib.evaluate.measures import comparison
from rag_assets.lib.retrieve import bm25
from rag_assets.lib.store.paths import duckdb_path, partition_files
from rag_assets.partitions import model_strategy_key
from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import materialize_all
from rag_assets_tests.dagster_status import StaleStatus

pytestmark = pytest.mark.integration

MODELS = ["wordllama", "paraphrase-MiniLM-L3-v2"]
STRATEGIES = ["boundaries", "blind"]


@pytest.fixture
def built(tmp_path, tiny_corpus, tiny_needles, monkeypatch):
    """A home of two models x two strategies, and how many BM25 indexes building it took."""
    built = []
    original = bm25.BM25.__init__

    def counted(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(bm25.BM25, "__init__", counted)
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"),
                           retrievers=["dense", "bm25", "hybrid", "late_interaction"])
    instance = DagsterInstance.ephemeral()
    materialize_all(settings, instance, model_keys=MODELS, strategies=STRATEGIES, progress=lambda _: None)
    return settings, instance, built


def _rows(home: Path, asset: str) -> list[dict]:
    return [row for file in partition_files(home, asset) for row in pq.ParquetFile(file).read().to_pylist()]


def test_bm25_is_built_once_per_strategy_recorded_once_and_fused_by_every_model(built):
    settings, instance, builds = built
    home = Path(settings.home)
    assert len(builds) == len(STRATEGIES)  # was one per model x strategy: 4
    lexical = _rows(home, "lexical_runs")
    assert {(r["strategy"], r["model"], r["retriever"]) for r in lexical} == {
        (strategy, "bm25", "bm25") for strategy in STRATEGIES}
    runs = _rows(home, "retrieval_runs")
    assert {r["retriever"] for r in runs} == {"dense", "hybrid", "late_interaction"}
    assert {(r["model"], r["strategy"]) for r in runs} == {(m, s) for m in MODELS for s in STRATEGIES}
    # every model partition's hybrid list is the fusion of its own dense list and the strategy's one BM25 list
    deep = {(r["strategy"], r["query_id"]): r["ranked_chunk_ids"] for r in lexical}
    for row in runs:
        if row["retriever"] == "hybrid":
            [dense] = [r["chunk_ids"] for r in runs if r["retriever"] == "dense" and r["query_id"] == row["query_id"]
                       and (r["model"], r["strategy"]) == (row["model"], row["strategy"])]
            fused = set(dense) | set(deep[(row["strategy"], row["query_id"])])
            assert set(row["chunk_ids"]) <= fused
    with duckdb.connect(str(duckdb_path(home)), read_only=True) as connection:
        recorded = connection.sql("SELECT model, strategy, count(*) FROM latest_results WHERE retriever = 'bm25' "
                                  "GROUP BY ALL ORDER BY ALL").fetchall()
        shown = sorted((r["model"], r["strategy"]) for r in comparison(connection).to_pylist() if r["retriever"] == "bm25")
    queries = len({r["query_id"] for r in lexical})
    assert recorded == [("bm25", strategy, queries) for strategy in sorted(STRATEGIES)]
    assert shown == [("bm25", strategy) for strategy in sorted(STRATEGIES)]  # once per strategy in the comparison


def test_a_changed_bm25_parameter_shows_its_partitions_stale_and_nothing_of_the_models(built):
    settings, instance, _ = built
    before = stale_status_resolver(instance, build_definitions(settings).resolve_asset_graph())
    changed = settings.model_copy(update={"bm25": settings.bm25.model_copy(update={"k1": 0.9})})
    after = stale_status_resolver(instance, build_definitions(changed).resolve_asset_graph())

    for strategy in STRATEGIES:
        assert before.get_status(AssetKey("lexical_runs"), strategy) == StaleStatus.FRESH
        assert after.get_status(AssetKey("lexical_runs"), strategy) == StaleStatus.STALE
        for model in MODELS:
            key = str(model_strategy_key(model, strategy))
            assert after.get_status(AssetKey("embeddings"), key) == StaleStatus.FRESH
