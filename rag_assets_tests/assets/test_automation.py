"""Declarative automation, evaluated with Dagster's own evaluation API on a test instance: a weight
change requests exactly that model's partitions down to the metrics; a new registry entry requests
its partitions; unchanged inputs request nothing. And the nightly schedule's run request."""

import logging
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
import wordllama
from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DagsterInstance,
    build_schedule_context,
    evaluate_automation_conditions,
)

from rag_assets.definitions import build_definitions
from rag_assets.lib.embed.models import BUILT_IN, current_revision
from rag_assets.lib.embed.spec import WORDLLAMA, ModelSpec
from rag_assets.partitions import (
    add_model_partitions,
    model_partitions,
    model_strategy_key,
)
from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import Runner, materialize_all
from rag_assets.tags import TRIGGER_TAG

pytestmark = pytest.mark.integration

STRATEGIES = ["boundaries", "blind"]


def copy_wordllama(folder: Path) -> Path:
    source = Path(wordllama.__file__).parent
    for part in ("weights", "tokenizers"):
        shutil.copytree(source / part, folder / part, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return folder


def flip_a_weight(folder: Path) -> None:
    [weights] = (folder / "weights").glob("*.safetensors")
    with weights.open("r+b") as handle:
        handle.seek(-4, 2)
        handle.write(b"\x00\x00\x80\x3f")


@pytest.fixture
def copied_model(tmp_path, register_models):
    folder = copy_wordllama(tmp_path / "wordllama-copy")
    register_models(ModelSpec("wordllama-copy", WORDLLAMA, "wordllama", dimension=256, window=None, folder=str(folder)))
    return folder


def _settings(tmp_path, tiny_corpus, tiny_needles) -> RagSettings:
    return RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                       out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))


def _requested(result) -> dict[str, set]:
    return {key.to_user_string(): {str(p) for p in result.get_requested_partitions(key)}
            for key in (AssetKey(name) for name in ("corpus_snapshot", "extracted_text", "eval_set", "chunks",
                                                     "chunk_quality", "embeddings", "retrieval_runs",
                                                     "refusal_calibration", "retrieval_metrics"))
            if result.get_num_requested(key)}


def test_a_weight_change_requests_that_model_only_and_a_new_model_its_partitions(
        tmp_path, tiny_corpus, tiny_needles, copied_model, register_models):
    settings = _settings(tmp_path, tiny_corpus, tiny_needles)
    instance = DagsterInstance.ephemeral()
    models = ["wordllama-copy", "wordllama"]
    materialize_all(settings, instance, model_keys=models, strategies=STRATEGIES, progress=lambda _: None)
    defs = build_definitions(settings)
    runner = Runner(settings, instance, progress=lambda _: None)

    result = evaluate_automation_conditions(defs, instance)
    assert _requested(result) == {}  # everything is up to date
    runner.observe_inputs(models)  # the same bytes observed again
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {}

    flip_a_weight(copied_model)
    runner.observe_inputs(models)
    # the new observation names the model and both revisions (Dagster's own stale reason names neither)
    newest, before = instance.fetch_observations(AssetRecordsFilter(
        asset_key=AssetKey("embedding_model"), asset_partitions=["wordllama-copy"]), limit=2).records
    old, new = (r.asset_observation.tags["dagster/data_version"] for r in (before, newest))
    assert old != new and newest.asset_observation.metadata["previous_revision"].value == old
    assert newest.asset_observation.metadata["weights_changed"].value.startswith(f"wordllama-copy: revision {old} -> {new}")
    assert "weights_changed" not in before.asset_observation.metadata  # the same bytes observed again: no change
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    changed = {str(model_strategy_key("wordllama-copy", s)) for s in STRATEGIES}
    # embeddings, retrieval and the refusal cut of the changed model in one run per partition; the metrics
    # wait for them
    assert _requested(result) == {"embeddings": changed, "retrieval_runs": changed, "refusal_calibration": changed}
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {}  # requested once, not again while nothing else changed
    runner.model_partitions("wordllama-copy", STRATEGIES)  # what the daemon's runs do
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {"retrieval_metrics": {"None"}}
    runner.run("evaluation_metrics")
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {}

    # a new registry entry: its partitions, and nothing of the others
    register_models(ModelSpec("wordllama-new", WORDLLAMA, "wordllama", dimension=256, window=None,
                              folder=str(copied_model)))
    add_model_partitions(instance, ["wordllama-new"])
    runner.observe_inputs(["wordllama-new"])
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    new = {str(model_strategy_key("wordllama-new", s)) for s in STRATEGIES}
    requested = _requested(result)
    assert requested["embeddings"] == new
    assert requested.get("retrieval_runs", new) == new  # in the same tick, or once its embeddings exist


def test_the_nightly_schedule_requests_a_tagged_evaluation_at_its_time(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_ASSETS_NIGHTLY_CRON", "30 3 * * *")
    monkeypatch.setenv("RAG_ASSETS_NIGHTLY_TIMEZONE", "Europe/Berlin")
    defs = build_definitions(RagSettings(home=str(tmp_path / "home")))
    schedule = defs.resolve_schedule_def("nightly_evaluation")
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("30 3 * * *", "Europe/Berlin")
    assert schedule.job_name == "nightly_observation"  # nightly_completion evaluates once it is current
    job = defs.resolve_job_def("nightly_observation")
    assert {key.to_user_string() for key in job.asset_layer.selected_asset_keys} == {"corpus_folder", "embedding_model"}
    with DagsterInstance.ephemeral() as instance:
        context = build_schedule_context(instance=instance,
                                         scheduled_execution_time=datetime(2026, 12, 1, 2, 30, tzinfo=timezone.utc))
        [request] = schedule.evaluate_tick(context).run_requests
    assert request.tags[TRIGGER_TAG] == "nightly"
    monkeypatch.delenv("RAG_ASSETS_NIGHTLY_CRON")
    monkeypatch.delenv("RAG_ASSETS_NIGHTLY_TIMEZONE")
    plain = build_definitions(RagSettings(home=str(tmp_path / "home"))).resolve_schedule_def("nightly_evaluation")
    assert (plain.cron_schedule, plain.execution_timezone) == ("0 2 * * *", "UTC")


def test_a_corpus_change_rebuilds_extraction_then_everything_after_it(tmp_path, tiny_corpus, tiny_needles):
    corpus = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, corpus)
    settings = _settings(tmp_path, corpus, tiny_needles)
    instance = DagsterInstance.ephemeral()
    materialize_all(settings, instance, model_keys=["wordllama"], strategies=STRATEGIES, progress=lambda _: None)
    defs = build_definitions(settings)
    runner = Runner(settings, instance, progress=lambda _: None)
    result = evaluate_automation_conditions(defs, instance)
    assert _requested(result) == {}

    page = corpus / "toasters.html"
    page.write_text(page.read_text().replace("setting three", "setting four"))
    runner.observe_inputs(["wordllama"])
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    # one run carries the unpartitioned chain; nothing partitioned reads it before it is rebuilt
    assert _requested(result) == {"corpus_snapshot": {"None"}, "extracted_text": {"None"}, "eval_set": {"None"}}
    runner.run("evaluation_inputs")
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    # every materialised chunk partition, with its quality in the same run; the index waits for them
    assert _requested(result) == {"chunks": set(STRATEGIES), "chunk_quality": set(STRATEGIES)}
    for strategy in STRATEGIES:
        runner.run("chunking", strategy)
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    rebuilt = {str(model_strategy_key("wordllama", s)) for s in STRATEGIES}
    assert _requested(result) == {"embeddings": rebuilt, "retrieval_runs": rebuilt, "refusal_calibration": rebuilt}
    runner.model_partitions("wordllama", STRATEGIES)
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {"retrieval_metrics": {"None"}}


def test_an_observation_describes_each_models_weights_and_removes_a_partition_no_registry_entry_names(
        tmp_path, tiny_corpus, tiny_needles):
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(model_partitions.name, ["added-by-hand"])
    runner = Runner(_settings(tmp_path, tiny_corpus, tiny_needles), instance, progress=lambda _: None)

    def warnings_about_it() -> list[str]:
        return [entry.user_message for run in instance.get_runs() for entry in instance.all_logs(run.run_id)
                if entry.level == logging.WARNING and "added-by-hand" in entry.user_message]

    runner.observe_inputs(["wordllama"])
    assert instance.get_dynamic_partitions(model_partitions.name) == ["wordllama"]
    [warning] = warnings_about_it()
    assert "names no entry of the model registry: removed" in warning and "RAG_ASSETS_MODELS_FILE" in warning
    runner.observe_inputs(["wordllama"])
    assert len(warnings_about_it()) == 1  # reported once, not at every observation

    # the page of the weights shows what they are, and the version is the revision
    [record] = instance.fetch_observations(AssetRecordsFilter(
        asset_key=AssetKey("embedding_model"), asset_partitions=["wordllama"]), limit=1).records
    observation = record.asset_observation
    revision = current_revision(BUILT_IN["wordllama"])
    assert observation.tags["dagster/data_version"] == revision
    assert observation.metadata["revision"].value == revision
    assert observation.metadata["package"].value == "wordllama" and observation.metadata["dimension"].value == 256
    assert observation.metadata["weights_mb"].value > 1


def test_the_metrics_wait_for_the_refusal_cut_rebuilt_after_the_retrieval_and_run_again_after_it(
        tmp_path, tiny_corpus, tiny_needles):
    """The interleaving the UI showed: a partition's retrieval_runs materialised from the UI, then its
    refusal_calibration rebuilt by the automation in a run of its own; the metrics read both, so they are
    requested only once neither is requested or running, and again when the cut changes after them."""
    settings = _settings(tmp_path, tiny_corpus, tiny_needles)
    instance = DagsterInstance.ephemeral()
    materialize_all(settings, instance, model_keys=["wordllama"], strategies=["boundaries"], progress=lambda _: None)
    defs = build_definitions(settings)
    runner = Runner(settings, instance, progress=lambda _: None)
    result = evaluate_automation_conditions(defs, instance)
    assert _requested(result) == {}
    key = model_strategy_key("wordllama", "boundaries")

    def materialise(*assets: str) -> None:  # what a launch from the UI's asset graph runs
        job = defs.resolve_job_def("model_partition").get_subset(asset_selection={AssetKey(a) for a in assets})
        assert job.execute_in_process(instance=instance, partition_key=key).success

    materialise("retrieval_runs")
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {"refusal_calibration": {str(key)}}  # not the metrics beside it
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {}  # the cut is requested (its run not yet done): the metrics still wait
    materialise("refusal_calibration")
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {"retrieval_metrics": {"None"}}
    runner.run("evaluation_metrics")
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {}

    materialise("refusal_calibration")  # a cut rebuilt after the metrics started: they run again
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert _requested(result) == {"retrieval_metrics": {"None"}}


class NightlySensor:
    """The nightly_completion sensor ticked as the daemon ticks it (its cursor kept between ticks), and the runs it
    requests executed in process."""

    def __init__(self, defs, instance: DagsterInstance) -> None:
        self.defs, self.instance, self.cursor = defs, instance, None
        self.sensor = defs.resolve_sensor_def("nightly_completion")

    def tick(self):
        from dagster import build_sensor_context, partition_loading_context

        context = build_sensor_context(instance=self.instance, repository_def=self.defs.get_repository_def(),
                                       cursor=self.cursor)
        with partition_loading_context(dynamic_partitions_store=self.instance):  # what the daemon provides
            result = self.sensor.evaluate_tick(context)
        self.cursor = result.cursor
        return result

    def run(self, request):
        job = self.defs.resolve_job_def(request.job_name)
        return job.execute_in_process(instance=self.instance, partition_key=request.partition_key, tags=request.tags)

    def observe(self, at: str) -> None:
        observed = self.defs.resolve_job_def("nightly_observation").execute_in_process(
            instance=self.instance, tags={"dagster/scheduled_execution_time": at, TRIGGER_TAG: "nightly"})
        assert observed.success


def test_a_night_after_a_weight_change_rebuilds_that_model_first_then_evaluates_once(
        tmp_path, tiny_corpus, tiny_needles, copied_model, monkeypatch):
    """The nightly run on the night a model's weights changed: the observation, then (the automation off)
    the nightly_completion sensor rebuilds exactly that model's partitions, then appends one evaluation run,
    which passes its stamp check."""
    from rag_assets import nightly
    from rag_assets.lib.store import paths

    settings = _settings(tmp_path, tiny_corpus, tiny_needles)
    instance = DagsterInstance.ephemeral()
    materialize_all(settings, instance, model_keys=["wordllama-copy", "wordllama"], strategies=STRATEGIES,
                    progress=lambda _: None)
    sensor = NightlySensor(build_definitions(settings), instance)
    tick, run, night = sensor.tick, sensor.run, sensor.observe

    flip_a_weight(copied_model)
    night("2026-12-01T02:00:00+00:00")
    assert "the automation may rebuild them first" in tick().skip_message  # its grace, right after the observation
    monkeypatch.setattr(nightly, "AUTOMATION_GRACE_SECONDS", 0.0)
    rebuilds = tick().run_requests
    assert {(r.job_name, r.partition_key) for r in rebuilds} == {
        ("model_partition", str(model_strategy_key("wordllama-copy", s))) for s in STRATEGIES}
    assert all(r.tags[TRIGGER_TAG] == "nightly" for r in rebuilds)
    assert all(run(request).success for request in rebuilds)
    [evaluation] = tick().run_requests
    assert evaluation.job_name == "evaluation_metrics" and evaluation.tags[TRIGGER_TAG] == "nightly"
    result = run(evaluation)
    assert result.success and all(c.passed for c in result.get_asset_check_evaluations())
    assert "is evaluated" in tick().skip_message  # one evaluation run a night

    import duckdb
    with duckdb.connect(str(paths.duckdb_path(Path(settings.home))), read_only=True) as connection:
        revisions = connection.sql("SELECT DISTINCT revision FROM latest_results WHERE model = 'wordllama-copy'").fetchall()
    assert revisions == [(current_revision(ModelSpec("wordllama-copy", WORDLLAMA, "wordllama", dimension=256,
                                                      window=None, folder=str(copied_model))),)]

    night("2026-12-02T02:00:00+00:00")  # a night when nothing changed: evaluated at once, nothing rebuilt
    [evaluation] = tick().run_requests
    assert evaluation.job_name == "evaluation_metrics"


def test_a_night_after_a_needle_sentence_was_edited_appends_its_point_and_alarms_on_unchanged_needles(
        tmp_path, tiny_corpus, tiny_needles, monkeypatch):
    """A writer edits a needle's sentence during the day: that night the nightly_completion sensor rebuilds what
    the corpus change made stale and appends the evaluation point, which leaves the edited needle out, and the
    regression alarm compares the two runs on the needles unchanged in both."""
    import duckdb

    from rag_assets import nightly
    from rag_assets.lib.evaluate.regressions import latest_regressions
    from rag_assets.lib.store import paths

    corpus = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, corpus)
    settings = _settings(tmp_path, corpus, tiny_needles).model_copy(update={"max_lost_needles": 0.5})
    instance = DagsterInstance.ephemeral()
    materialize_all(settings, instance, model_keys=["wordllama"], strategies=STRATEGIES[:1], progress=lambda _: None)
    sensor = NightlySensor(build_definitions(settings), instance)
    tick, run = sensor.tick, sensor.run
    page = corpus / "toasters.html"
    page.write_text(page.read_text().replace("once a week", "every day"))  # the day's edit of t1's sentence
    sensor.observe("2026-12-01T02:00:00+00:00")
    monkeypatch.setattr(nightly, "AUTOMATION_GRACE_SECONDS", 0.0)
    for _ in range(6):  # the rebuilds, stage by stage, then the evaluation
        requests = tick().run_requests
        assert requests, "the night neither rebuilt nor evaluated"
        if requests[0].job_name == "evaluation_metrics":
            break
        assert all(run(request).success for request in requests)
    [evaluation] = requests
    assert evaluation.job_name == "evaluation_metrics" and evaluation.tags[TRIGGER_TAG] == "nightly"
    assert run(evaluation).success

    with duckdb.connect(str(paths.duckdb_path(Path(settings.home))), read_only=True) as connection:
        assert connection.sql("SELECT count(*) FROM evaluation_runs").fetchall() == [(2,)]  # the night's point
        newest = connection.sql("SELECT run_id FROM evaluation_runs ORDER BY created_at DESC LIMIT 1").fetchall()[0][0]
        assert connection.execute("SELECT needle_id, status FROM needle_changes WHERE run_id = ?",
                                  [newest]).fetchall() == [("t1", "edited")]
        report = latest_regressions(connection)
    assert not report.evaluation_set_changed and report.configurations > 0
    assert report.left_out == {"edited": ["t1"]}


TEAM_STORE = '''
ANSWERS = []


def search(query, k):
    return ANSWERS[:k]
'''


def test_a_reindexed_external_store_rebuilds_its_runs_by_itself_and_a_weight_change_does_not(
        tmp_path, tiny_corpus, tiny_needles, copied_model, register_models, monkeypatch):
    import importlib
    import json

    (tmp_path / "team_store_automation.py").write_text(TEAM_STORE)
    monkeypatch.syspath_prepend(str(tmp_path))
    store = importlib.import_module("team_store_automation")
    retrievers = tmp_path / "retrievers.json"
    retrievers.write_text(json.dumps([{"key": "team", "kind": "python", "target": "team_store_automation:search"}]))
    monkeypatch.setenv("RAG_ASSETS_RETRIEVERS_FILE", str(retrievers))
    settings = _settings(tmp_path, tiny_corpus, tiny_needles)
    instance = DagsterInstance.ephemeral()
    models = ["wordllama-copy"]
    materialize_all(settings, instance, model_keys=models, strategies=STRATEGIES[:1], progress=lambda _: None)
    defs = build_definitions(settings)
    runner = Runner(settings, instance, progress=lambda _: None)

    def requested(result) -> dict[str, set]:
        return {name: {str(p) for p in result.get_requested_partitions(AssetKey(name))}
                for name in ("external_runs", "embeddings", "retrieval_runs", "retrieval_metrics")
                if result.get_num_requested(AssetKey(name))}

    result = evaluate_automation_conditions(defs, instance)
    assert requested(result) == {}
    runner.run("observe_external")  # the 15-minute observation: the store answers as before
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert requested(result) == {}

    store.ANSWERS[:] = [{"doc_id": "tiny.md", "text": "re-indexed", "score": 1.0}]  # the team re-indexed
    runner.run("observe_external")
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert requested(result) == {"external_runs": {"team"}}  # at once, not at night; no built-in partition
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert requested(result) == {}  # requested once

    flip_a_weight(copied_model)  # a model's weights change: the external store uses no model of ours
    runner.observe_inputs(models)
    result = evaluate_automation_conditions(defs, instance, cursor=result.cursor)
    assert "external_runs" not in requested(result) and requested(result)["embeddings"]
