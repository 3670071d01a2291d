"""One model x strategy partition of retrieval rows: every query against the index, judged by span,
stamped with the index's build; an index built from other weights or chunks is refused."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rag_assets.lib.embed.partition import write_embeddings
from rag_assets.lib.evalsets.loading import load_eval_set
from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_rows
from rag_assets.lib.ingest.corpus import scan_corpus
from rag_assets.lib.ingest.documents import extract_entry
from rag_assets.lib.retrieve.runs import IndexMismatch, retrieve_and_judge
from rag_assets.lib.store.schemas import CHUNKS, EVAL_SET, EXTRACTED_TEXT, STAMP_FIELDS, table_from_rows
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
