"""What an external retriever answers (hits) and the two ways it fails: an entry or answer that cannot be
used (ExternalRetrieverError), and one query that erred or timed out (QueryFailed, recorded as a miss)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


class ExternalRetrieverError(ValueError):
    """A registry entry or an answer that cannot be used; the message names the entry and the field."""

    paragraph = True


class QueryFailed(Exception):
    """One query that erred or timed out (recorded as a miss with this message)."""


@dataclass
class Hit:
    text: str
    doc_id: str | None = None
    score: float | None = None
    distance: float | None = None


Ask = Callable[[str, int], list[Hit]]  # how to ask a retriever one query: (query, k) -> hits


@dataclass(frozen=True)
class QueryLimits:
    """What one query may take of an external retriever: ``deadline_seconds`` in all (connecting, waiting, reading,
    retries, a Python retriever's own work) and ``max_answer_bytes`` of answer; past either the query fails with
    its reason, a miss like an HTTP failure (the settings ``evaluation.external_deadline_seconds`` and
    ``evaluation.external_max_answer_bytes``)."""

    deadline_seconds: float = 30.0
    max_answer_bytes: int = 8 * 1024 * 1024
Embed = Callable[[list[str]], Any]  # query vectors of a registered model, for a store queried by vector


def hits_from_answer(answer: Any, where: str) -> list[Hit]:
    """Hits from a JSON answer ``{"hits": [...]}`` (or the list itself); a malformed one names the field."""
    items = answer.get("hits") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        raise ExternalRetrieverError(f"{where}: the answer has no list 'hits'")
    return [hit_from_dict(item, f"{where}: hits[{number}]") for number, item in enumerate(items)]


def hit_from_dict(item: Any, where: str) -> Hit:
    """One hit ``{"text", "doc_id", "score", "distance", "metadata"}`` (only ``text`` required)."""
    if not isinstance(item, dict):
        raise ExternalRetrieverError(f"{where} is a {type(item).__name__}, not an object")
    text = item.get("text")
    if not isinstance(text, str):
        raise ExternalRetrieverError(f"{where}.text is missing or not a string")
    doc_id = item.get("doc_id", (item.get("metadata") or {}).get("doc_id") if isinstance(item.get("metadata"), dict) else None)
    numbers = {}
    for name in ("score", "distance"):
        value = item.get(name)
        if value is not None and not isinstance(value, (int, float)):
            raise ExternalRetrieverError(f"{where}.{name} is {value!r}, not a number")
        numbers[name] = float(value) if value is not None else None
    return Hit(text, str(doc_id) if doc_id is not None else None, **numbers)


def str_or_none(value: Any) -> str | None:
    return str(value) if value is not None else None


def number_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None
