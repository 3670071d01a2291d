from pathlib import Path

from dagster import AssetKey, Definitions

from rag_assets.definitions import defs as load_definitions

defs = load_definitions()

EXPECTED = {
    "corpus_folder", "embedding_model", "chunking_strategy", "corpus_snapshot", "extracted_text", "eval_set", "chunks", "chunk_quality", "lexical_runs", "embeddings", "retrieval_runs",
    "refusal_calibration", "retrieval_metrics", "external_retriever", "external_runs", "published_evaluation",
}


def test_definitions_load():
    """The code location workspace.yaml names loads, with every asset, check, job, schedule, sensor and resource."""
    import importlib

    import yaml

    [entry] = yaml.safe_load((Path(__file__).parents[1] / "workspace.yaml").read_text())["load_from"]
    module = importlib.import_module(entry["python_module"]["module_name"])
    loaded = module.defs()
    Definitions.validate_loadable(loaded)  # raises when Dagster could not load the location
    repository = loaded.get_repository_def()
    assert {key.to_user_string() for key in repository.asset_graph.get_all_asset_keys()} == EXPECTED
    checks = {check.name for check in repository.asset_graph.asset_check_keys}
    assert checks == {spec.name for declared in module.ASSET_CHECKS for spec in declared.check_specs} and checks
    assert {job.name for job in repository.get_all_jobs()} - {"__ASSET_JOB"} == {
        "chunking", "evaluation_inputs", "evaluation_metrics", "external_partition", "model_partition",
        "nightly_observation", "observe_external", "observe_inputs", "observe_strategies", "publish_evaluation"}
    assert {s.name for s in repository.schedule_defs} == {"external_observation", "input_observation",
                                                          "nightly_evaluation", "strategy_observation"}
    assert {s.name for s in repository.sensor_defs} == {"model_registry", "nightly_completion", "rag_assets_automation"}
    assert set(loaded.resources) == {"io_manager", "models", "settings"}


def test_asset_keys_and_lineage():
    graph = defs.resolve_asset_graph()
    assert {key.to_user_string() for key in graph.get_all_asset_keys()} == EXPECTED
    parents = {key.to_user_string(): {p.to_user_string() for p in graph.get(key).parent_keys}
               for key in graph.get_all_asset_keys()}
    assert parents["corpus_snapshot"] == {"corpus_folder"}
    assert graph.get(AssetKey("corpus_folder")).is_observable
    assert parents["extracted_text"] == {"corpus_snapshot"}
    assert parents["chunks"] == {"extracted_text", "chunking_strategy"}
    assert graph.get(AssetKey("chunking_strategy")).is_observable
    assert parents["embeddings"] == {"chunks", "embedding_model"}
    assert graph.get(AssetKey("embedding_model")).is_observable
    # the observed weights directly too, so Dagster's status reaches retrieval after a weight change
    # and its strategy's BM25 rankings, computed once for every model (lexical_runs)
    assert parents["retrieval_runs"] == {"eval_set", "extracted_text", "chunks", "embeddings", "embedding_model",
                                         "lexical_runs"}
    assert parents["lexical_runs"] == {"chunks", "eval_set", "extracted_text"}
    assert graph.get(AssetKey("lexical_runs")).partitions_def == graph.get(AssetKey("chunks")).partitions_def
    assert parents["eval_set"] == {"extracted_text"}
    assert parents["chunk_quality"] == {"chunks", "eval_set", "extracted_text"}
    assert parents["refusal_calibration"] == {"retrieval_runs"}
    # corpus_snapshot: the snapshot the stamps must match, checked before anything is written
    assert parents["retrieval_metrics"] == {"retrieval_runs", "lexical_runs", "refusal_calibration", "embeddings",
                                            "chunk_quality",
                                            "corpus_folder", "embedding_model", "corpus_snapshot", "external_runs"}
    # a team's retriever: asked every query of the same evaluation set, judged on the same canonical text
    assert parents["external_runs"] == {"external_retriever", "eval_set", "extracted_text"}
    assert graph.get(AssetKey("external_retriever")).is_observable
    assert graph.get(AssetKey("retrieval_metrics")).pools == {"duckdb_write"}
    # the evaluation published to the team's database after each run (publish.url), never while DuckDB is written
    assert parents["published_evaluation"] == {"retrieval_metrics"}
    assert graph.get(AssetKey("published_evaluation")).pools == {"duckdb_write"}


def test_checks_and_schedules():
    graph = defs.resolve_asset_graph()
    assert {key.name for key in graph.asset_check_keys} == {
        "every_document_extracted", "no_source_syntax_left", "needles_follow_the_corpus", "needles_occur_once", "needles_not_headings", "query_ids_unique",
        "phrasings_present", "out_of_domain_present", "vectors_are_unit_length", "retrieval_stamps_agree",
        "metrics_stamps_agree", "no_significant_regression"}
    assert defs.resolve_schedule_def("input_observation").job_name == "observe_inputs"
    assert defs.resolve_schedule_def("strategy_observation").job_name == "observe_strategies"
    assert defs.resolve_schedule_def("nightly_evaluation").job_name == "nightly_observation"
    assert defs.resolve_sensor_def("nightly_completion") is not None
    assert defs.resolve_schedule_def("external_observation").job_name == "observe_external"
    assert defs.resolve_sensor_def("model_registry") is not None
    assert defs.resolve_sensor_def("rag_assets_automation") is not None
    conditioned = {key.to_user_string() for key in graph.get_all_asset_keys()
                   if graph.get(key).automation_condition is not None}
    assert conditioned == EXPECTED - {"corpus_folder", "embedding_model", "chunking_strategy", "external_retriever"}  # every materialisable stage


def test_an_eighth_strategy_is_one_strategies_file_entry_and_a_new_partition(tmp_path, monkeypatch):
    """A strategy of the strategies file gets its partition of chunks and of every model's embeddings from the
    model_registry sensor, as a model does: no code, no restart."""
    import json

    from dagster import AssetKey, DagsterInstance, build_sensor_context

    from rag_assets.lib.ingest.chunking import STRATEGIES
    from rag_assets.partitions import model_partitions, strategy_partitions
    from rag_assets.schedules import model_registry

    strategies_file = tmp_path / "strategies.json"
    strategies_file.write_text(json.dumps([{"name": "bh", "header": True, "unit": "tokens", "size": [128, 256]}]))
    monkeypatch.setenv("RAG_ASSETS_STRATEGIES_FILE", str(strategies_file))
    repository = load_definitions().get_repository_def()
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(model_partitions.name, ["all-MiniLM-L6-v2"])
        result = model_registry.evaluate_tick(build_sensor_context(instance=instance, repository_def=repository))
        [request] = [r for r in result.dynamic_partitions_requests if r.partitions_def_name == strategy_partitions.name]
        assert list(request.partition_keys) == [*STRATEGIES, "bh-128t-o0", "bh-256t-o0"]
        instance.add_dynamic_partitions(strategy_partitions.name, list(request.partition_keys))
        graph = load_definitions().resolve_asset_graph()
        chunk_keys = graph.get(AssetKey("chunks")).partitions_def.get_partition_keys(dynamic_partitions_store=instance)
        assert chunk_keys == [*STRATEGIES, "bh-128t-o0", "bh-256t-o0"]
        embedding_keys = graph.get(AssetKey("embeddings")).partitions_def.get_partition_keys(
            dynamic_partitions_store=instance)
        assert len(embedding_keys) == 9 and "all-MiniLM-L6-v2|bh-256t-o0" in embedding_keys


def test_the_executor_comes_from_the_environment_and_an_unknown_one_is_refused(monkeypatch):
    import pytest

    from rag_assets.definitions import build_definitions

    assert build_definitions().resolve_job_def("model_partition").executor_def.name == "in_process"
    monkeypatch.setenv("RAG_ASSETS_EXECUTOR", "multiprocess")
    assert build_definitions().resolve_job_def("model_partition").executor_def.name == "multiprocess"
    monkeypatch.setenv("RAG_ASSETS_EXECUTOR", "kubernetes")
    with pytest.raises(ValueError, match="RAG_ASSETS_EXECUTOR='kubernetes': Input should be 'in_process', "
                                         "'multiprocess' or 'k8s'"):
        build_definitions()


def test_on_kubernetes_every_job_runs_its_steps_as_kubernetes_jobs(monkeypatch):
    """RAG_ASSETS_EXECUTOR=k8s: dagster-k8s's k8s_job_executor for every job, with the step limit.
    (No Kubernetes cluster here: what is checked is that the definitions take it.)"""
    from dagster_k8s import k8s_job_executor

    from rag_assets.definitions import build_definitions

    monkeypatch.setenv("RAG_ASSETS_EXECUTOR", "k8s")
    monkeypatch.setenv("RAG_ASSETS_MAX_STEPS", "3")
    definitions = build_definitions()
    jobs = [definitions.resolve_job_def(job.name) for job in definitions.resolve_all_job_defs()]
    assert {job.name for job in jobs} >= {"evaluation_inputs", "model_partition", "evaluation_metrics"}
    for job in jobs:
        assert job.executor_def.name == "k8s", job.name
        assert job.executor_def.executor_creation_fn is k8s_job_executor.executor_creation_fn
        assert job.executor_def.apply_config_mapping({}).value["config"]["max_concurrent"] == 3


def test_where_the_graph_runs_is_not_what_it_was_built_with():
    from rag_assets.resources import RagSettings
    from rag_assets.runner.freshness import settings_fingerprint

    plain = RagSettings(home="/tmp/h")
    assert settings_fingerprint(plain) == settings_fingerprint(RagSettings(
        home="/tmp/h", ray_address="10.0.0.5:6379", dense_block_rows=1024))  # an engine or a block size
    assert settings_fingerprint(plain) != settings_fingerprint(RagSettings(home="/tmp/h", top_k=10))
