from dagster import AssetKey, Definitions

from rag_assets.definitions import defs
from rag_assets.lib.embedding import MODELS

EXPECTED = {
    "corpus_folder", "corpus_snapshot", "extracted_text", "eval_set", "chunks", "chunk_quality", "embeddings", "retrieval_runs",
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
    assert parents["eval_set"] == {"extracted_text"}
    assert parents["chunk_quality"] == {"chunks", "eval_set", "extracted_text"}
    assert parents["retrieval_metrics"] == {"retrieval_runs", "embeddings", "chunk_quality"}
    assert graph.get(AssetKey("retrieval_metrics")).pools == {"duckdb_write"}


def test_checks_and_schedules():
    graph = defs.resolve_asset_graph()
    assert {key.name for key in graph.asset_check_keys} == {
        "every_document_extracted", "needles_occur_once", "needles_not_headings", "query_ids_unique",
        "phrasings_present", "out_of_domain_present"}
    assert defs.resolve_schedule_def("corpus_observation").job_name == "observe_corpus"


def test_a_seventh_strategy_is_one_registry_entry_and_a_new_partition():
    import subprocess
    import sys

    program = (
        "from rag_assets.lib import chunking\n"
        "chunking.STRATEGIES['boundaries_header_256'] = chunking.Strategy("
        "'boundaries_header_256', target=256, boundaries=True, header=True)\n"
        "from rag_assets.definitions import defs\n"
        "from dagster import AssetKey\n"
        "graph = defs.resolve_asset_graph()\n"
        "print(sorted(graph.get(AssetKey('chunks')).partitions_def.get_partition_keys()))\n"
        "print(len(graph.get(AssetKey('embeddings')).partitions_def.get_partition_keys()) / len(chunking.STRATEGIES))\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    strategies, models_per_strategy = result.stdout.strip().splitlines()
    assert "'boundaries_header_256'" in strategies and strategies.count("'") == 2 * 7
    assert float(models_per_strategy) == len(MODELS)  # every model x the seven strategies
