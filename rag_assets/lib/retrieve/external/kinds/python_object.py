"""Kind ``python``: ``"target": "module:attribute"`` names a function ``(query, k) -> hits`` (dicts as an
http answer's), or an object with LangChain's ``invoke(query)`` (Documents: ``page_content``, ``metadata``)
or LlamaIndex's ``retrieve(query)`` (NodeWithScore: ``node.get_content()``, ``score``). Neither library is
a dependency: the adapters read those attributes."""

from __future__ import annotations

import importlib
from typing import Any, Literal, Mapping

from rag_assets.lib.retrieve.external.hits import (
    Ask,
    Embed,
    ExternalRetrieverError,
    Hit,
    QueryLimits,
    hit_from_dict,
    number_or_none,
    str_or_none,
)
from rag_assets.lib.retrieve.external.kinds.base import IN_FLIGHT, ExternalSpec


class PythonEntry(ExternalSpec):
    """``{"key": "mine", "kind": "python", "target": "team_retrievers:search"}``; ``in_flight`` queries at once."""

    kind: Literal["python"]
    target: str
    in_flight: int = IN_FLIGHT

    def in_flight_queries(self) -> int:
        return self.in_flight

    def asker(self, embed: Embed | None, environ: Mapping[str, str], limits: QueryLimits = QueryLimits()) -> Ask:
        module, _, attribute = self.target.partition(":")
        try:
            target = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError, ValueError) as error:
            raise ExternalRetrieverError(f"retriever {self.key!r}: cannot import {self.target!r} ({error})") from error
        where = f"retriever {self.key!r}"
        if hasattr(target, "invoke"):  # a LangChain retriever
            return lambda query, k: adapt(list(target.invoke(query))[:k], where)
        if hasattr(target, "retrieve"):  # a LlamaIndex retriever
            return lambda query, k: adapt(list(target.retrieve(query))[:k], where)
        if callable(target):
            return lambda query, k: adapt(list(target(query, k))[:k], where)
        raise ExternalRetrieverError(f"{where}: {self.target!r} is neither a function (query, k) -> hits nor "
                                     "an object with invoke() or retrieve()")


def adapt(result: Any, where: str) -> list[Hit]:
    """Hits from what a Python retriever returns: dicts, LangChain Documents or LlamaIndex NodeWithScore."""
    hits = []
    for number, item in enumerate(result or []):
        if isinstance(item, dict):
            hits.append(hit_from_dict(item, f"{where}[{number}]"))
        elif hasattr(item, "page_content"):  # LangChain's Document
            metadata = getattr(item, "metadata", None) or {}
            hits.append(Hit(item.page_content, str_or_none(metadata.get("doc_id") or metadata.get("source")),
                            number_or_none(metadata.get("score")), number_or_none(metadata.get("distance"))))
        elif hasattr(item, "node") and hasattr(item.node, "get_content"):  # LlamaIndex's NodeWithScore
            metadata = getattr(item.node, "metadata", None) or {}
            hits.append(Hit(item.node.get_content(), str_or_none(metadata.get("doc_id")), number_or_none(item.score)))
        else:
            raise ExternalRetrieverError(f"{where}[{number}] is a {type(item).__name__}: expected a dict, a LangChain "
                                         "Document or a LlamaIndex NodeWithScore")
    return hits
