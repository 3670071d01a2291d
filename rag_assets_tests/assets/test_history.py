"""The metrics history a person reads: `rag-assets history` per run, and the default configuration's
figures as numeric metadata Dagster plots over time."""

from pathlib import Path

import pytest
from dagster import DagsterInstance

from rag_assets.cli import main
from rag_assets.definitions import build_definitions
from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import Runner, materialize_all
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration


def test_history_prints_one_line_per_run_and_the_metrics_carry_numbers_to_plot(
        tmp_path, tiny_corpus, tiny_needles, monkeypatch, capsys):
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    instance = DagsterInstance.ephemeral()
    models = FakeEmbeddingModels()
    materialize_all(settings, instance, models=models, model_keys=["all-MiniLM-L6-v2"],
                    strategies=["boundaries_header"], progress=lambda _: None)
    again = Runner(settings, instance, models, progress=lambda _: None).run("evaluation_metrics")
    # a night: observe both inputs, then (nightly_completion: nothing is stale) append an evaluation run
    # although nothing changed
    definitions = build_definitions(settings, models)
    observed = definitions.resolve_job_def("nightly_observation").execute_in_process(
        instance=instance, tags={"rag_assets/trigger": "nightly"})
    assert observed.success
    assert {e.asset_key.to_user_string() for e in observed.get_asset_observation_events()} == {
        "corpus_folder", "embedding_model"}
    nightly = definitions.resolve_job_def("evaluation_metrics").execute_in_process(
        instance=instance, tags={"rag_assets/trigger": "nightly"})
    assert [m.asset_key.to_user_string() for m in nightly.get_asset_materialization_events()] == ["retrieval_metrics"]
    metadata = again.asset_materializations_for_node("retrieval_metrics")[0].metadata
    # the decision and the evaluation page first, then the verdict
    assert list(metadata)[:3] == ["decision", "evaluation_page", "verdict"]
    first, *detail = metadata["decision"].value.splitlines()  # a short first line (it fits the UI), the detail below
    assert first.startswith("**Ship ") and first.endswith("** at 1024 tokens") and len(first) < 100 and detail
    # the page as `rag-assets ui` serves it: an http address naming no folder (a copied storage folder's own page)
    assert metadata["evaluation_page"].value == "http://127.0.0.1:3001/index.html"
    assert (Path(settings.home) / "report" / "index.html").exists()
    assert metadata["verdict"].value.startswith("```\nVerdict at 1024 context")
    shipped = metadata["shipped"].value  # the pick, whose figures Dagster plots over the runs
    assert shipped.split(": ")[1].startswith("boundaries_header x ")  # the one strategy evaluated
    assert isinstance(metadata["success_at_1024_tokens"].value, float) and isinstance(metadata["mrr"].value, float)

    monkeypatch.setenv("RAG_ASSETS_HOME", settings.home)
    assert main(["history"]) == 0
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if line.startswith("| ") and not line.startswith("| run ")]
    assert len(lines) == 3  # three evaluation runs, oldest first, the same figures (nothing changed)
    assert lines[0].split("|")[5:] == lines[1].split("|")[5:] == lines[2].split("|")[5:]
    # without options, the history of the pick
    assert f"{metadata['success_at_1024_tokens'].value:.3f}" in lines[2] and f"{metadata['mrr'].value:.3f}" in lines[2]
    assert printed.startswith(shipped.replace(":", " x", 1))
    assert main(["history", "--model", "wordllama"]) == 1
    assert "no evaluation run holds wordllama x boundaries_header x " in capsys.readouterr().err
