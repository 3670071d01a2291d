from dagster import AssetKey, Definitions

from rag_assets.definitions import defs

EXPECTED = {
    "corpus_folder", "corpus_snapshot", "extracted_text", "eval_set", "chunks", "embeddings", "retrieval_runs",
    "retrieval_metrics",
}


def test_definitions_load():
    Definitions.validate_loadable(defs)


def test_asset_keys_and_lineage():
    graph = defs.resolve_asset_graph()
    assert {key.to_user_string() for key in graph.get_all_asset_keys()} == EXPECTED
    parents = {key.to_user_string(): {p.to_user_string() for p in graph.get(key).parent_keys}
               for key in graph.get_all_asset_keys()}
    assert parents["corpus_snapshot"] == {"corpus_folder"}
    assert graph.get(AssetKey("corpus_folder")).is_observable
    assert parents["extracted_text"] == {"corpus_snapshot"}
    assert parents["chunks"] == {"extracted_text"}
    assert parents["embeddings"] == {"chunks"}
    assert parents["retrieval_runs"] == {"eval_set", "extracted_text", "chunks", "embeddings"}
    assert parents["retrieval_metrics"] == {"retrieval_runs"}
    assert graph.get(AssetKey("retrieval_metrics")).pools == {"duckdb_write"}


def test_checks_and_schedules():
    graph = defs.resolve_asset_graph()
    assert {key.name for key in graph.asset_check_keys} == {"every_document_extracted"}
    assert defs.resolve_schedule_def("corpus_observation").job_name == "observe_corpus"
