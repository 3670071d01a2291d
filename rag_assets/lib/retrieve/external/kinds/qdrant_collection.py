"""Kind ``qdrant``: a Qdrant collection queried with the query vectors of a registered model, through
``qdrant-client`` (the external extra): a server (``url``, an API key from an environment variable) or the
client's local mode (``path``, a folder). The index version is the collection's own: its points count and
its vectors' configuration."""

from __future__ import annotations

import atexit
import hashlib
import threading
from typing import Literal, Mapping

from pydantic import model_validator

from rag_assets.lib.retrieve.external.hits import (
    Ask,
    Embed,
    ExternalRetrieverError,
    Hit,
    QueryLimits,
    number_or_none,
    str_or_none,
)
from rag_assets.lib.retrieve.external.kinds.base import ExternalSpec

_LOCAL: dict[str, object] = {}  # a local folder admits one client per process: shared by every asker of it
_LOCK = threading.Lock()


class QdrantEntry(ExternalSpec):
    """``{"key": "docs", "kind": "qdrant", "url": "http://127.0.0.1:6333", "collection": "team_docs",
    "model": "all-MiniLM-L6-v2", "api_key_variable": "QDRANT_API_KEY"}``, or ``"path"`` instead of ``"url"`` for
    a local-mode folder; the payload keys of the text and the document (``text_field``, ``doc_id_field``) and a
    named vector (``vector_name``) where the collection has several."""

    kind: Literal["qdrant"]
    collection: str
    model: str
    url: str | None = None
    path: str | None = None
    api_key_variable: str | None = None
    text_field: str = "text"
    doc_id_field: str = "doc_id"
    vector_name: str | None = None

    @model_validator(mode="after")
    def _one_place(self) -> QdrantEntry:
        if (self.url is None) == (self.path is None):
            raise ValueError("give url (a Qdrant server) or path (a local-mode folder), one of them")
        return self

    def embedding_model(self) -> str | None:
        return self.model

    def variables(self) -> list[str]:
        return [self.api_key_variable] if self.api_key_variable else []

    def in_flight_queries(self) -> int:
        return 1 if self.path else 4  # local mode serves one query at a time

    def client(self, environ: Mapping[str, str], limits: QueryLimits = QueryLimits()):
        from qdrant_client import QdrantClient

        if self.path is not None:
            with _LOCK:
                if self.path not in _LOCAL:
                    _LOCAL[self.path] = QdrantClient(path=self.path)
                    atexit.register(_LOCAL[self.path].close)  # closed before the interpreter tears down
                return _LOCAL[self.path]
        if self.api_key_variable and self.api_key_variable not in environ:
            raise ExternalRetrieverError(f"retriever {self.key!r}: the environment variable {self.api_key_variable} "
                                         "its API key is read from is not set")
        return QdrantClient(url=self.url, api_key=environ.get(self.api_key_variable) if self.api_key_variable else None,
                            timeout=max(1, int(limits.deadline_seconds)))

    def reported_version(self, environ: Mapping[str, str] | None = None) -> str | None:
        info = self.client(environ or {}).get_collection(self.collection)
        configuration = hashlib.sha256(info.config.params.model_dump_json().encode("utf-8")).hexdigest()[:12]
        return f"points {info.points_count}, configuration {configuration}"

    def asker(self, embed: Embed | None, environ: Mapping[str, str], limits: QueryLimits = QueryLimits()) -> Ask:
        client = self.client(environ, limits)
        collection, using, text_field, doc_field = self.collection, self.vector_name, self.text_field, self.doc_id_field

        def ask(query: str, k: int) -> list[Hit]:
            vector = [float(value) for value in embed([query])[0]]
            points = client.query_points(collection, query=vector, using=using, limit=k, with_payload=True).points
            return [Hit(str((point.payload or {}).get(text_field, "")), str_or_none((point.payload or {}).get(doc_field)),
                        number_or_none(point.score)) for point in points]
        return ask
