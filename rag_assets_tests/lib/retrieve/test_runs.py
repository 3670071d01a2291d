"""One model x strategy partition of retrieval rows: every query against the index, judged by span,
stamped with the index's build; an index built from other weights or chunks is refused. BM25 once per
strategy: its rows are the ones each model partition had, and each partition's hybrid fuses its ranking."""

import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rag_assets.lib.embed.partition import write_embeddings
from rag_assets.lib.evalsets.loading import load_eval_set
from rag_assets.lib.evaluate.results_store import lexical_rows_beside
from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_rows
from rag_assets.lib.ingest.corpus import scan_corpus
from rag_assets.lib.ingest.documents import extract_entry
from rag_assets.lib.retrieve import bm25
from rag_assets.lib.retrieve.bm25 import BM25Config
from rag_assets.lib.retrieve.engine import StaleRanking, model_free
from rag_assets.lib.retrieve.runs import IndexMismatch, given_rankings, retrieve_and_judge, retrieve_and_judge_lexical
from rag_assets.lib.store.schemas import (
    CHUNKS,
    EVAL_SET,
    EXTRACTED_TEXT,
    RESULT_COLUMNS,
    STAMP_FIELDS,
    table_from_rows,
)
from rag_assets.lib.store.stamps import stamp_problems
from rag_assets_tests.fakes import HashingEmbedder

KETTLE = ("# Kettles\n\n## Descaling\n\nFill the kettle with equal parts vinegar and water. "
          "Boil it once and leave it overnight.\n\n## Safety\n\nNever put the kettle base in water. "
          "Unplug it before cleaning.\n")
TOASTER = "# Toasters\n\n## Crumbs\n\nEmpty the crumb tray every week. A full tray can catch fire.\n"
NEEDLE = "Never put the kettle base in water."


@pytest.fixture
def partition(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "kettle.md").write_text(KETTLE)
    (corpus / "toaster.md").write_text(TOASTER)
    extracted = [row | {"snapshot_id": "snap"} for entry in scan_corpus(corpus)
                 for row in extract_entry(corpus, entry.path, entry.format, entry.sha256, 10**6)]
    chunks = chunk_rows(extracted, STRATEGIES["boundaries"])
    needles = tmp_path / "needles.jsonl"
    needles.write_text(json.dumps({"id": "n1", "doc_id": "kettle.md", "needle": NEEDLE,
                                   "questions": {"doc": "kettle base water", "ticket": "can I wash the base?"}}) + "\n")
    outside = tmp_path / "ood.jsonl"
    outside.write_text(json.dumps({"id": "o1", "query": "how do I tune a piano", "kind": "off_topic"}) + "\n")
    eval_set = table_from_rows(EVAL_SET, load_eval_set(needles, outside).rows, "eval_set")
    chunk_table = table_from_rows(CHUNKS, chunks, "chunks")
    embedder = HashingEmbedder()
    write_embeddings(tmp_path / "embeddings.parquet", chunk_table, embedder, "boundaries", tmp_path / "home")
    return {"eval_set": eval_set, "extracted_text": table_from_rows(EXTRACTED_TEXT, extracted, "extracted_text"),
            "chunks": chunk_table, "embeddings": pq.read_table(tmp_path / "embeddings.parquet"), "embedder": embedder,
            "home": tmp_path / "home"}


def _run(partition, **options):
    return retrieve_and_judge(partition["eval_set"], partition["extracted_text"], partition["chunks"],
                              partition["embeddings"], partition["embedder"], retrievers=list(options.pop(
                                  "retrievers", ["dense", "bm25", "hybrid", "cross_encoder"])), top_k=3,
                              partition="all-MiniLM-L6-v2|boundaries", **options)


def test_every_query_is_judged_by_the_chunk_that_holds_the_needle(partition):
    table, figures = _run(partition)
    rows = table.to_pylist()
    assert {(r["query_id"], r["retriever"]) for r in rows} == {
        (q, name) for q in ("n1:doc", "n1:ticket", "o1") for name in ("dense", "bm25", "hybrid")}
    # the holder, found independently: the one chunk whose own text holds the needle
    [holder] = [c["chunk_id"] for c in partition["chunks"].to_pylist() if NEEDLE in c["content"]]
    for row in rows:
        if row["query_kind"] == "needle":
            expected = [rank for rank, chunk in enumerate(row["chunk_ids"], start=1) if chunk == holder]
            assert row["relevant_ranks"] == expected and row["relevant_total"] == 1
            assert row["hit_rank"] == (expected[0] if expected else None)
        else:
            assert (row["hit_rank"], row["relevant_ranks"], row["relevant_total"]) == (None, [], 0)
    stamp = {field: partition["embeddings"].column(field)[0].as_py() for field in STAMP_FIELDS}
    assert all({field: row[field] for field in STAMP_FIELDS} == stamp for row in rows)
    assert figures["queries"] == 3 and figures["judged_queries"] == 2
    assert figures["retrievers_skipped"] == {"cross_encoder": "no cross encoder configured (settings.cross_encoder)"}
    assert figures["hits_in_top_3"]["dense"]["hits"] == sum(
        r["hit_rank"] is not None for r in rows if r["retriever"] == "dense")


def test_the_dense_words_of_the_needle_put_its_chunk_first(partition):
    table, _ = _run(partition, retrievers=["dense"])
    [row] = [r for r in table.to_pylist() if r["query_id"] == "n1:doc"]
    assert row["hit_rank"] == 1  # "kettle base water": the hashing embedder matches words


def test_ann_is_measured_against_exact_search(partition):
    _, figures = _run(partition, retrievers=["dense", "ann"])
    assert figures["ann_recall_at_1"] == 1.0 and figures["ann"]["m"] == 32


def test_an_index_of_other_weights_or_other_chunks_is_refused(partition):
    partition["embedder"].revision = "other-weights"
    with pytest.raises(IndexMismatch, match="built with weights hashing-1, the model loaded now is other-weights: "
                                            "re-materialise embeddings for all-MiniLM-L6-v2|boundaries"):
        _run(partition)
    partition["embedder"].revision = "hashing-1"
    partition["chunks"] = partition["chunks"].slice(1)
    with pytest.raises(IndexMismatch, match="do not match the current chunks"):
        _run(partition)


def test_rows_are_kept_for_every_retriever_even_without_any_hit(partition):
    nothing = pa.Table.from_pylist([r | {"question": "zzz"} for r in partition["eval_set"].to_pylist()],
                                   schema=partition["eval_set"].schema)
    table, figures = _run(partition | {"eval_set": nothing}, retrievers=["bm25"])
    assert table.num_rows == 3 and all(r["chunk_ids"] == [] for r in table.to_pylist())
    assert figures["hits_in_top_3"]["bm25"]["hits"] == 0  # a miss is a row, never dropped


# BM25 once per strategy: run by lexical_runs, given to every model partition's hybrid fusion and rerankers

def _lexical(partition, retrievers=("dense", "bm25", "hybrid", "late_interaction"), **options):
    return retrieve_and_judge_lexical(partition["eval_set"], partition["extracted_text"], partition["chunks"],
                                      list(retrievers), 3, "boundaries", "chunks-v1", **options)


def _given(partition, lexical, **options):
    return given_rankings(lexical, partition["eval_set"], options.pop("chunks_version", "chunks-v1"),
                          options.pop("bm25_config", BM25Config()), "lexical_runs boundaries")


@pytest.fixture
def bm25_builds(monkeypatch):
    """How many BM25 indexes were built."""
    built = []
    original = bm25.BM25.__init__

    def counted(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(bm25.BM25, "__init__", counted)
    return built


def test_bm25_runs_once_per_strategy_and_each_model_partition_fuses_its_ranking(partition, bm25_builds):
    retrievers = ["dense", "bm25", "hybrid", "late_interaction"]
    in_place, _ = _run(partition, retrievers=retrievers)  # every retriever run in the model partition, as before
    assert len(bm25_builds) == 1
    lexical, figures = _lexical(partition)
    assert len(bm25_builds) == 2 and figures["index_seconds"] >= 0 and figures["retrievers"] == ["bm25"]
    given, _ = _run(partition, retrievers=retrievers, given=_given(partition, lexical), source="lexical_runs boundaries")
    assert len(bm25_builds) == 2  # the model partition built no BM25 index of its own

    lexical_rows = lexical.to_pylist()
    assert {(r["retriever"], r["model"], r["revision"], r["dimension"]) for r in lexical_rows} == {
        ("bm25", "bm25", None, None)}
    assert {r["query_id"] for r in lexical_rows} == {"n1:doc", "n1:ticket", "o1"}
    assert {r["retriever"] for r in given.to_pylist()} == {"dense", "hybrid", "late_interaction"}
    judged = ["chunk_ids", "scores", "distances", "hit_rank", "relevant_ranks", "content_tokens", "context_tokens"]
    by_place = {(r["query_id"], r["retriever"]): r for r in in_place.to_pylist()}
    for row in lexical_rows:  # BM25's rows once are the rows each model partition had
        assert {c: row[c] for c in judged} == {c: by_place[(row["query_id"], "bm25")][c] for c in judged}
        assert len(row["chunk_ids"]) <= 3 and row["ranked_chunk_ids"][:len(row["chunk_ids"])] == row["chunk_ids"]
    for row in given.to_pylist():  # and what builds on BM25 is unchanged
        assert {c: row[c] for c in judged} == {c: by_place[(row["query_id"], row["retriever"])][c] for c in judged}
    lexical_ms = {r["query_id"]: r["stage_ms"] for r in lexical_rows}
    dense_ms = {r["query_id"]: r["latency_ms"] for r in given.to_pylist() if r["retriever"] == "dense"}
    for row in given.to_pylist():
        if row["retriever"] == "hybrid":  # the pipeline's time still counts BM25's, as measured where it ran
            assert row["latency_ms"] == pytest.approx(row["stage_ms"] + dense_ms[row["query_id"]]
                                                      + lexical_ms[row["query_id"]])


def test_bm25_is_ranked_for_hybrid_when_it_is_not_evaluated_and_not_at_all_when_nothing_uses_it(partition, bm25_builds):
    lexical, figures = _lexical(partition, retrievers=["dense", "hybrid"])
    assert figures["retrievers"] == ["bm25"] and len(lexical) == 3
    nothing, figures = _lexical(partition, retrievers=["dense", "ann"])
    assert len(nothing) == 0 and figures["retrievers"] == [] and len(bm25_builds) == 1  # the first call's
    table, _ = _run(partition, retrievers=["dense", "ann"], given=_given(partition, nothing))
    assert {r["retriever"] for r in table.to_pylist()} == {"dense", "ann"}


def test_evaluated_retrievers_decide_which_lexical_rows_are_recorded(partition, tmp_path):
    lexical, _ = _lexical(partition, retrievers=["dense", "hybrid"])
    folder = tmp_path / "home" / "parquet" / "lexical_runs" / "strategy=boundaries"
    folder.mkdir(parents=True)
    pq.write_table(lexical, folder / "data.parquet")
    runs, _ = _run(partition, retrievers=["dense", "hybrid"], given=_given(partition, lexical))
    runs = runs.select(RESULT_COLUMNS)
    with duckdb.connect() as connection:
        every = lexical_rows_beside(connection, tmp_path / "home", runs)
        evaluated = lexical_rows_beside(connection, tmp_path / "home", runs, ["dense", "hybrid"])
    assert len(every) == len(runs) + 3 and {r["model"] for r in every.to_pylist()} >= {"bm25"}
    assert evaluated.equals(runs)


def test_a_ranking_of_other_questions_chunks_or_parameters_is_refused_with_what_to_rebuild(partition):
    lexical, _ = _lexical(partition)
    other_hash = lexical.set_column(lexical.schema.get_field_index("eval_hash"), "eval_hash",
                                    pa.array(["older"] * len(lexical)))
    for table, options, reason in (
            (other_hash, {}, "another evaluation set"),
            (lexical, {"chunks_version": "chunks-v2"}, "other chunks"),
            (lexical, {"bm25_config": BM25Config(k1=0.9)}, "other BM25 parameters")):
        with pytest.raises(StaleRanking, match=f"lexical_runs boundaries were computed for {reason}.*rebuild them"):
            _given(partition, table, **options)
    given = _given(partition, lexical)
    given["bm25"]["n1:doc"] = given["bm25"]["n1:doc"]._replace(chunk_ids=["kettle.md#gone"])
    with pytest.raises(StaleRanking, match="names chunk kettle.md#gone, which the index does not hold"):
        _run(partition, retrievers=["hybrid"], given=given, source="lexical_runs boundaries")
    del given["bm25"]["n1:doc"]
    with pytest.raises(StaleRanking, match="hold no bm25 ranking for query n1:doc"):
        _run(partition, retrievers=["hybrid"], given=given, source="lexical_runs boundaries")


def test_the_stamp_check_does_not_ask_the_registry_for_bm25s_weights():
    assert model_free() == ("bm25",)
    stamps = [{"model": "bm25", "revision": None, "dimension": None, "normalized": None, "strategy": "blind",
               "pipeline_version": "3", "extractor_version": "x", "snapshot_id": "s"},
              {"model": "m1", "revision": "r1", "dimension": 8, "normalized": True, "strategy": "blind",
               "pipeline_version": "3", "extractor_version": "x", "snapshot_id": "s"}]
    assert stamp_problems(stamps, {"m1": "r1"}, "3", model_free=("bm25",)) == []
    assert stamp_problems(stamps, {"m1": "r1"}, "3") == ["bm25: not in the model registry"]
