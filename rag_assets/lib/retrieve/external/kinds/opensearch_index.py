"""Kind ``opensearch``: an OpenSearch (or Elasticsearch) index asked through its ``_search`` API: a ``match``
query on the text field (the engine's BM25), or, with ``model`` and ``vector_field``, a k-NN query with the
registered model's query vectors. The http kind's client (``http_service.HttpEntry``) carries it: headers from
environment variables, same-origin redirects only, retries, the query's deadline and answer size."""

from __future__ import annotations

import urllib.parse
from typing import Any, Literal

from pydantic import model_validator

from rag_assets.lib.retrieve.external.hits import Embed, ExternalRetrieverError, Hit, number_or_none, str_or_none
from rag_assets.lib.retrieve.external.kinds.http_service import HttpEntry


class OpenSearchEntry(HttpEntry):
    """``{"key": "docs", "kind": "opensearch", "url": "https://search:9200", "index": "team_docs",
    "headers": {"Authorization": "SEARCH_AUTH"}}``; for vectors add ``"model"`` and ``"vector_field"``
    (``"flavour": "elasticsearch"`` for Elasticsearch's top-level ``knn``)."""

    kind: Literal["opensearch"]  # type: ignore[assignment]
    index: str
    text_field: str = "text"
    doc_id_field: str = "doc_id"
    vector_field: str | None = None
    model: str | None = None
    flavour: Literal["opensearch", "elasticsearch"] = "opensearch"

    @model_validator(mode="after")
    def _vectors_need_both(self) -> OpenSearchEntry:
        if (self.model is None) != (self.vector_field is None):
            raise ValueError("a k-NN query needs both model (whose query vectors) and vector_field (where they are "
                             "indexed); give both, or neither for a match query")
        return self

    def embedding_model(self) -> str | None:
        return self.model

    def search_url(self) -> str:
        return f"{self.url.rstrip('/')}/{urllib.parse.quote(self.index, safe='')}/_search"

    def request_body(self, query: str, k: int, embed: Embed | None) -> dict:
        source = [self.text_field, self.doc_id_field]
        if self.vector_field is None:
            return {"size": k, "_source": source, "query": {"match": {self.text_field: query}}}
        vector = [float(value) for value in embed([query])[0]]
        if self.flavour == "elasticsearch":
            return {"size": k, "_source": source,
                    "knn": {"field": self.vector_field, "query_vector": vector, "k": k, "num_candidates": max(100, k)}}
        return {"size": k, "_source": source, "query": {"knn": {self.vector_field: {"vector": vector, "k": k}}}}

    def hits_of(self, answer: Any, where: str) -> list[Hit]:
        found = answer.get("hits", {}).get("hits") if isinstance(answer, dict) else None
        if not isinstance(found, list):
            raise ExternalRetrieverError(f"{where}: the answer has no hits.hits list (an OpenSearch _search answer)")
        hits = []
        for number, item in enumerate(found):
            source = item.get("_source") if isinstance(item, dict) else None
            if not isinstance(source, dict) or not isinstance(source.get(self.text_field), str):
                raise ExternalRetrieverError(f"{where}: hit {number} has no _source.{self.text_field} text")
            hits.append(Hit(source[self.text_field], str_or_none(source.get(self.doc_id_field)),
                            number_or_none(item.get("_score"))))
        return hits
