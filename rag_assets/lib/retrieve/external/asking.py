"""Every query of an evaluation set asked of one external retriever, a few at once: a query that errs or
times out is a miss with its error, never a crash that stops the others."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Sequence

from rag_assets.lib.retrieve.external.hits import Ask, Hit, QueryFailed


@dataclass
class Answered:
    query_id: str
    hits: list[Hit]
    latency_ms: float
    error: str | None = None


def ask_all(ask: Ask, queries: Sequence[tuple[str, str]], k: int, in_flight: int = 4) -> list[Answered]:
    """Every (query id, text) asked, at most ``in_flight`` at once, in the queries' order; a query that
    raises is a miss with its error (one exception type never stops the others)."""
    def one(item: tuple[str, str]) -> Answered:
        query_id, text = item
        started = time.perf_counter()
        try:
            hits = ask(text, k)[:k]
            error = None
        except QueryFailed as failure:
            hits, error = [], str(failure)
        except Exception as failure:  # noqa: BLE001 - a retriever's own exception: recorded, never a crash
            hits, error = [], f"{type(failure).__name__}: {str(failure).splitlines()[0] if str(failure) else ''}"
        return Answered(query_id, hits, (time.perf_counter() - started) * 1000.0, error)

    with ThreadPoolExecutor(max_workers=max(1, in_flight)) as pool:
        return list(pool.map(one, queries))
