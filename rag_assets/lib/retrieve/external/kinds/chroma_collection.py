"""Kind ``chroma``: a collection on a Chroma server, queried with its own embedding function, or with the
query vectors of a registered model (``model``)."""

from __future__ import annotations

from typing import Literal, Mapping

from pydantic import Field

from rag_assets.lib.retrieve.external.hits import Ask, Embed, Hit, QueryLimits, str_or_none
from rag_assets.lib.retrieve.external.kinds.base import ExternalSpec


class ChromaEntry(ExternalSpec):
    """``{"key": "docs", "kind": "chroma", "host": "127.0.0.1", "port": 8000, "collection": "team_docs"}``."""

    kind: Literal["chroma"]
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535, strict=True)
    collection: str
    model: str | None = None
    ssl: bool = False

    def embedding_model(self) -> str | None:
        return self.model

    def asker(self, embed: Embed | None, environ: Mapping[str, str], limits: QueryLimits = QueryLimits()) -> Ask:
        import chromadb

        client = chromadb.HttpClient(host=self.host, port=self.port, ssl=self.ssl)
        collection = client.get_collection(self.collection)
        embed = embed if self.model else None  # without a model, the collection's own embedding function

        def ask(query: str, k: int) -> list[Hit]:
            arguments = {"query_embeddings": [list(map(float, embed([query])[0]))]} if embed else {"query_texts": [query]}
            found = collection.query(n_results=k, include=["documents", "metadatas", "distances"], **arguments)
            return [Hit(text, str_or_none((metadata or {}).get("doc_id")), None, float(distance))
                    for text, metadata, distance in zip(found["documents"][0], found["metadatas"][0],
                                                        found["distances"][0])]
        return ask
