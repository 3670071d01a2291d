"""What the Dagster UI shows without clicking into events: Dagster's standard metadata on every
Parquet output, kinds, owners and tags, code versions that make a logic change show as unsynced, and
table previews; corpus text rendered as text, never live HTML."""

import shutil

import pytest
from dagster import AssetKey, DagsterInstance

from rag_assets.definitions import ASSETS, build_definitions
from rag_assets.lib.formats.markdown import escape_markdown
from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import materialize_all
from rag_assets_tests.dagster_status import StaleStatus, resolver_for
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration

PARQUET_ASSETS = ["corpus_snapshot", "extracted_text", "eval_set", "chunks", "chunk_quality", "embeddings",
                  "retrieval_runs", "refusal_calibration"]


def latest_metadata(instance, asset, partition=None):
    from dagster import AssetRecordsFilter

    [record] = instance.fetch_materializations(AssetRecordsFilter(
        asset_key=AssetKey(asset), asset_partitions=[partition] if partition else None), limit=1).records
    return record.asset_materialization.metadata


def test_every_output_carries_standard_metadata_and_previews_and_a_logic_change_shows_unsynced(
        tmp_path, tiny_corpus, tiny_needles, monkeypatch):
    corpus = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, corpus)
    (corpus / "<b>bold<i> | page.md").write_text("# Markup <script>alert(1)</script>\n\nA page whose name is markup.\n")
    monkeypatch.setenv("RAG_ASSETS_OWNERS", "team:search")
    monkeypatch.setenv("RAG_ASSETS_TAGS", "tier=eval")
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    instance = DagsterInstance.ephemeral()
    materialize_all(settings, instance, models=FakeEmbeddingModels(), model_keys=["all-MiniLM-L6-v2"],
                    strategies=["boundaries_header"], progress=lambda _: None)

    for asset in PARQUET_ASSETS:
        partition = {"chunks": "boundaries_header", "chunk_quality": "boundaries_header"}.get(
            asset, "all-MiniLM-L6-v2|boundaries_header" if asset in ("embeddings", "retrieval_runs",
                                                                      "refusal_calibration") else None)
        metadata = latest_metadata(instance, asset, partition)
        rows = metadata["dagster/row_count"].value
        columns = [c.name for c in metadata["dagster/column_schema"].value.columns]
        assert rows > 0 and columns, asset
        assert metadata["dagster/uri"].value.startswith("file://") and metadata["dagster/uri"].value.endswith(
            "data.parquet"), asset
    assert "chunk_id" in [c.name for c in latest_metadata(instance, "chunks", "boundaries_header")[
        "dagster/column_schema"].value.columns]

    # a preview of sample chunks, with section and offsets
    sample = latest_metadata(instance, "chunks", "boundaries_header")["sample_chunks"].value
    assert [c.name for c in sample.schema.columns] == ["chunk_id", "section", "start", "end", "content"]
    assert 1 <= len(sample.records) <= 6 and all(r.data["end"] > r.data["start"] for r in sample.records)

    # document names are escaped where Markdown renders them
    largest = latest_metadata(instance, "extracted_text")["largest_documents"].value
    assert "<b>" not in largest and "&lt;b&gt;bold&lt;i&gt; \\| page.md" in largest

    # owners, tags and kinds from the settings and the definitions
    graph = build_definitions(settings).resolve_asset_graph()
    node = graph.get(AssetKey("chunks"))
    assert node.owners == ["team:search"] and node.tags["tier"] == "eval" and node.kinds == {"python", "parquet"}
    assert graph.get(AssetKey("retrieval_metrics")).kinds == {"python", "duckdb"}
    assert graph.get(AssetKey("embedding_model")).description.startswith("The installed weights")

    # a change of chunking logic (a new code version) shows the chunks partition unsynced, as a model change does
    resolver = resolver_for(instance)
    assert resolver.get_status(AssetKey("chunks"), "boundaries_header") == StaleStatus.FRESH
    changed = [a.map_asset_specs(lambda s: s.replace_attributes(code_version="changed"))
               if getattr(a, "key", None) == AssetKey("chunks") else a for a in ASSETS]
    unsynced = resolver_for(instance, changed)
    causes = unsynced.get_stale_root_causes(AssetKey("chunks"), "boundaries_header")
    assert unsynced.get_status(AssetKey("chunks"), "boundaries_header") == StaleStatus.STALE
    assert any("code version" in cause.reason for cause in causes)


def test_markdown_from_the_corpus_is_text():
    assert escape_markdown("<img src=x onerror=alert(1)> | [link](http://x) *bold*\nnext") == (
        "&lt;img src=x onerror=alert\\(1\\)&gt; \\| \\[link\\]\\(http://x\\) \\*bold\\* next")
