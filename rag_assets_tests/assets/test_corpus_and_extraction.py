"""corpus_snapshot and extracted_text through Dagster: failures, checks, data versions, staleness."""

import shutil

import pytest
from dagster import AssetCheckSeverity, DagsterInstance, materialize

from rag_assets.definitions import ASSET_CHECKS, ASSETS, build_definitions
from rag_assets.resources import ParquetIOManager, RagSettings
from rag_assets_tests.dagster_status import StaleStatus, stale_status
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration


def _setup(tmp_path, corpus):
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(corpus), eval_set="unused.jsonl")
    resources = {"settings": settings, "models": FakeEmbeddingModels(), "io_manager": ParquetIOManager(home=settings.home)}
    return settings, resources


def _materialize(resources, instance, *selection):
    return materialize([*ASSETS, *ASSET_CHECKS], selection=list(selection), resources=resources, instance=instance)


def _observe(settings, instance):
    build_definitions(settings, FakeEmbeddingModels()).resolve_job_def("observe_inputs").execute_in_process(
        instance=instance)


def _data_version(result, asset):
    return result.asset_materializations_for_node(asset)[0].tags["dagster/data_version"]


def test_mixed_folder_fails_the_broken_documents_alone_and_the_check_names_them(tmp_path, tiny_corpus):
    settings, resources = _setup(tmp_path, tiny_corpus.parent / "mixed_corpus")
    result = _materialize(resources, DagsterInstance.ephemeral(), "corpus_snapshot", "extracted_text")
    assert result.success
    metadata = result.asset_materializations_for_node("extracted_text")[0].metadata
    assert (metadata["documents"].value, metadata["documents_ok"].value, metadata["documents_failed"].value) == (8, 5, 3)
    assert set(metadata["failed"].value) == {"binary.txt", "broken.pdf", "docs/latin1.md"}
    assert "| document | format | characters | sections |" in metadata["largest_documents"].value
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    check = checks["every_document_extracted"]
    assert not check.passed and check.severity == AssetCheckSeverity.WARN
    assert checks["no_source_syntax_left"].passed  # the good documents carry no source syntax
    for name in ("binary.txt: binary content", "broken.pdf: corrupt PDF", "docs/latin1.md: not valid utf-8"):
        assert name in check.description


def test_unchanged_folder_keeps_its_version_and_a_changed_file_makes_it_stale(tmp_path, tiny_corpus):
    corpus = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, corpus)
    settings, resources = _setup(tmp_path, corpus)
    instance = DagsterInstance.ephemeral()
    _observe(settings, instance)
    first = _materialize(resources, instance, "corpus_snapshot", "extracted_text")
    assert stale_status(instance, "corpus_snapshot") == StaleStatus.FRESH
    assert stale_status(instance, "extracted_text") == StaleStatus.FRESH
    assert all(check.passed for check in first.get_asset_check_evaluations())

    # a rerun on the same folder gives the same data version, and nothing downstream goes stale
    _observe(settings, instance)
    again = _materialize(resources, instance, "corpus_snapshot")
    assert _data_version(again, "corpus_snapshot") == _data_version(first, "corpus_snapshot")
    assert stale_status(instance, "corpus_snapshot") == StaleStatus.FRESH
    assert stale_status(instance, "extracted_text") == StaleStatus.FRESH

    # one changed file: the observation notices, then the new snapshot makes extraction stale
    (corpus / "toasters.html").write_text((corpus / "toasters.html").read_text().replace("three", "four"))
    _observe(settings, instance)
    assert stale_status(instance, "corpus_snapshot") == StaleStatus.STALE
    changed = _materialize(resources, instance, "corpus_snapshot")
    assert _data_version(changed, "corpus_snapshot") != _data_version(first, "corpus_snapshot")
    assert stale_status(instance, "extracted_text") == StaleStatus.STALE
