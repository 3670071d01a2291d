"""Retrieval rows built by hand for the decision, comparison and verdict tests: needles asked in one or
more phrasings, each returned chunk costing a given number of context tokens."""

from __future__ import annotations

from itertools import accumulate

import pyarrow as pa

SCHEMA = pa.schema([
    ("query_id", pa.string()), ("needle_id", pa.string()), ("query_kind", pa.string()), ("hit_rank", pa.int64()),
    ("relevant_ranks", pa.list_(pa.int64())), ("relevant_total", pa.int64()), ("phrasing", pa.string()),
    ("retriever", pa.string()), ("model", pa.string()), ("revision", pa.string()), ("strategy", pa.string()),
    ("latency_ms", pa.float64()), ("content_tokens", pa.list_(pa.int64())), ("context_tokens", pa.list_(pa.int64())),
])
DEPTH = 10  # chunks returned per query


def configuration(model: str, strategy: str, retriever: str, ranks: list, chunk_tokens: int = 100,
                  phrasings: tuple[str, ...] = ("doc",), latency_ms: float = 1.0) -> list[dict]:
    """Rows of one configuration: ``ranks[i]`` is needle ``n<i>``'s hit rank (None: a miss) under every
    phrasing, or a tuple of one rank per phrasing; every returned chunk costs ``chunk_tokens``."""
    rows = []
    for i, rank in enumerate(ranks):
        per_phrasing = rank if isinstance(rank, tuple) else (rank,) * len(phrasings)
        for phrasing, hit in zip(phrasings, per_phrasing):
            content = [chunk_tokens] * DEPTH
            rows.append({"query_id": f"n{i}:{phrasing}", "needle_id": f"n{i}", "query_kind": "needle", "hit_rank": hit,
                         "relevant_ranks": [hit] if hit else [], "relevant_total": 1, "phrasing": phrasing,
                         "retriever": retriever, "model": model, "revision": "r", "strategy": strategy,
                         "latency_ms": latency_ms, "content_tokens": content, "context_tokens": list(accumulate(content))})
    return rows


def table(*configurations: list[dict]) -> pa.Table:
    return pa.Table.from_pylist([row for rows in configurations for row in rows], schema=SCHEMA)


def success_by_hand(connection, budget: int, run: str = "latest_results") -> dict[tuple[str, str, str], float]:
    """success within ``budget`` tokens of every configuration, recomputed in Python from the stored rows: a
    needle's success is the share of its phrasings whose needle chunk ends within the budget (the running
    total at its rank), a configuration's the mean over needles."""
    rows = connection.sql(f"SELECT model, strategy, retriever, coalesce(needle_id, query_id), hit_rank, "
                          f"context_tokens FROM {run} WHERE query_kind <> 'out_of_domain'").fetchall()
    per_needle: dict = {}
    for model, strategy, retriever, needle, rank, context in rows:
        won = rank is not None and context[rank - 1] <= budget
        per_needle.setdefault((model, strategy, retriever), {}).setdefault(needle, []).append(won)
    return {c: sum(sum(v) / len(v) for v in needles.values()) / len(needles) for c, needles in per_needle.items()}
