"""`rag-assets evaluate` on a storage folder where nothing changed runs no partition again; a change to
the corpus, a setting or a forced rebuild does, judged by Dagster's own per-partition status."""

import shutil

import pytest
from dagster import DagsterInstance

from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import materialize_all
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration

STRATEGIES = ["boundaries_header", "blind"]


def evaluate(settings, instance, models, **options):
    said = []
    outcome = materialize_all(settings, instance, models=models, model_keys=["all-MiniLM-L6-v2"],
                              strategies=STRATEGIES, progress=said.append, **options)
    ran = [line.removeprefix("running ") for line in said if line.startswith("running ")]
    return outcome, ran


def test_an_unchanged_evaluation_runs_nothing_again_and_a_change_reruns_what_it_touches(
        tmp_path, tiny_corpus, tiny_needles):
    corpus = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, corpus)
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    instance, models = DagsterInstance.ephemeral(), FakeEmbeddingModels()
    # a resource is built anew for another setting (model_copy would not reach Dagster's own config)
    top_10 = RagSettings(**{**settings.model_dump(), "top_k": 10})
    first, ran = evaluate(settings, instance, models)
    assert first.up_to_date == [] and "evaluation_metrics" in ran
    assert sum(r.startswith("model_partition") for r in ran) == 2

    # nothing changed: the inputs and chunks are rebuilt (seconds) and found identical, so no model
    # partition and no metrics run; the checks reported are those of the runs that built them
    again, ran = evaluate(settings, instance, models)
    assert not any(r.startswith(("model_partition", "evaluation_metrics")) for r in ran)
    assert sorted(again.up_to_date) == sorted(
        ["evaluation_metrics"] + [f"model_partition [all-MiniLM-L6-v2 x {s}]" for s in STRATEGIES])
    assert {(c.asset, c.name, c.passed) for c in again.checks} == {(c.asset, c.name, c.passed) for c in first.checks}

    # a different setting: everything downstream of it runs again
    _, ran = evaluate(top_10, instance, models)
    assert sum(r.startswith("model_partition") for r in ran) == 2 and "evaluation_metrics" in ran

    # one more document: the snapshot, text and chunks change, so every partition and the metrics run
    (corpus / "added.md").write_text("# Added\n\nA new page about sets and frozensets in Python.\n")
    _, ran = evaluate(top_10, instance, models)
    assert sum(r.startswith("model_partition") for r in ran) == 2 and "evaluation_metrics" in ran

    # and --rebuild runs everything even when nothing changed
    _, ran = evaluate(top_10, instance, models, rebuild=True)
    assert sum(r.startswith("model_partition") for r in ran) == 2 and "evaluation_metrics" in ran
