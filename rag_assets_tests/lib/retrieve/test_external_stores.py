"""Vector databases a team keeps its chunks in, through their own clients: a real Chroma server and a
LanceDB table holding the tiny corpus's chunks and our vectors give the same ranks as our dense retriever
over the same chunks and vectors, which proves the external path end to end."""

from __future__ import annotations

import numpy as np
import pytest

from rag_assets.lib.embed.models import load_model
from rag_assets.lib.evalsets.loading import load_eval_set
from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_rows
from rag_assets.lib.ingest.corpus import scan_corpus
from rag_assets.lib.ingest.documents import canonical_texts, extract_file
from rag_assets.lib.retrieve.external import ask_all, asker, external_rows, external_stamp, index_version, spec_from
from rag_assets_tests.conftest import FIXTURES
from rag_assets_tests.servers import ChromaServer

pytestmark = [pytest.mark.integration]
CORPUS, K = FIXTURES / "tiny_corpus", 5


@pytest.fixture(scope="module")
def built():
    """The tiny corpus's boundaries chunks, their wordllama vectors, and the evaluation rows."""
    rows = [extract_file(CORPUS, e.path, e.format, e.sha256, 10**7) | {"snapshot_id": "s", "extractor_version": "2"}
            for e in scan_corpus(CORPUS, {})]
    chunks = chunk_rows(rows, STRATEGIES["boundaries"])
    model = load_model("wordllama")
    vectors = model.embed([c["text"] for c in chunks])
    evaluation = load_eval_set(FIXTURES / "tiny_needles.jsonl", FIXTURES / "tiny_out_of_domain.jsonl").rows
    return chunks, vectors, model, evaluation, canonical_texts(rows)


def dense_ranks(built) -> dict[str, list[str]]:
    """Our dense retriever's order: cosine over the same unit vectors, as doc#char=start,end locators."""
    chunks, vectors, model, evaluation, _ = built
    queries = model.embed_queries([r["question"] for r in evaluation])
    order = np.argsort(-(queries @ vectors.T), axis=1, kind="stable")[:, :K]
    return {r["query_id"]: [f"{chunks[i]['doc_id']}#char={chunks[i]['start']},{chunks[i]['end']}" for i in row]
            for r, row in zip(evaluation, order)}


def judged(spec, built):
    chunks, vectors, model, evaluation, documents = built
    ask = asker(spec, model.embed_queries)
    answered = ask_all(ask, [(r["query_id"], r["question"]) for r in evaluation], K, 1)
    return external_rows(spec.key, answered, evaluation, documents, external_stamp(spec.key, "v", "s", "2"))


@pytest.mark.servers
def test_a_chroma_collection_ranks_as_our_dense_retriever_and_a_reindex_changes_its_version(tmp_path, built):
    import chromadb

    chunks, vectors, model, evaluation, _ = built
    server = ChromaServer(tmp_path)
    try:
        client = chromadb.HttpClient(host="127.0.0.1", port=server.port)
        collection = client.create_collection("team_docs", metadata={"hnsw:space": "cosine"})
        collection.add(ids=[c["chunk_id"] for c in chunks], embeddings=vectors.tolist(),
                       documents=[c["content"] for c in chunks], metadatas=[{"doc_id": c["doc_id"]} for c in chunks])
        spec = spec_from({"key": "chroma_docs", "kind": "chroma", "host": "127.0.0.1", "port": server.port,
                          "collection": "team_docs", "model": "wordllama"})
        rows, figures = judged(spec, built)
        assert figures["errors"] == 0 and figures["hits_unlocated"] == 0
        assert {r["query_id"]: r["chunk_ids"] for r in rows} == dense_ranks(built)
        assert sum(r["hit_rank"] is not None for r in rows) >= 4
        before = index_version(spec, asker(spec, model.embed_queries))
        rewritten = "A chunk rewritten by a re-index of the store."
        collection.update(ids=[chunks[0]["chunk_id"]], documents=[rewritten],
                          embeddings=model.embed([rewritten]).tolist())
        assert index_version(spec, asker(spec, model.embed_queries)) != before  # its probe answers changed
    finally:
        server.stop()


def test_a_lancedb_table_ranks_as_our_dense_retriever(tmp_path, built):
    import lancedb

    chunks, vectors, *_ = built
    database = lancedb.connect(str(tmp_path / "lance"))
    database.create_table("team_docs", data=[{"vector": v.tolist(), "text": c["content"], "doc_id": c["doc_id"]}
                                             for c, v in zip(chunks, vectors)])
    spec = spec_from({"key": "lance_docs", "kind": "lancedb", "uri": str(tmp_path / "lance"), "table": "team_docs",
                      "model": "wordllama"})
    rows, figures = judged(spec, built)
    assert figures["errors"] == 0 and figures["hits_unlocated"] == 0
    assert {r["query_id"]: r["chunk_ids"] for r in rows} == dense_ranks(built)
