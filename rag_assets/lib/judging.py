"""Judging a ranked list: where the items that answer a query landed.

The retrievers (``rag_assets.lib.retrievers``) rank chunks; this module says which ranks hold an
answer, by span for needle queries and by document for BEIR-style queries.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from rag_assets.lib.evalset import DOCUMENT, NEEDLE, Query


def document_ranking(ranked_chunk_ids: Sequence[str], chunk_doc: Mapping[str, str]) -> list[str]:
    """Chunk ranks rolled up to document ranks: each document ranks where its best chunk does."""
    seen: dict[str, None] = {}
    for chunk in ranked_chunk_ids:
        seen.setdefault(chunk_doc[chunk], None)
    return list(seen)


def judge(
    query: Query, ranked_chunk_ids: Sequence[str], holders: set[str], chunk_doc: Mapping[str, str]
) -> dict:
    """Where the relevant items of one query landed in one ranked list.

    For a needle query the items are the chunks holding the needle whole (``holders``); for a
    document query, the relevant documents in the rolled-up document ranking. ``hit_rank`` is the
    first such rank or None; ``relevant_ranks`` every such rank within the list; ``relevant_total``
    how many relevant items exist at all (the ideal list for nDCG). Out-of-domain queries have none.
    """
    if query.query_kind == NEEDLE:
        ranks = [rank for rank, chunk in enumerate(ranked_chunk_ids, start=1) if chunk in holders]
        total = len(holders)
    elif query.query_kind == DOCUMENT:
        relevant = set(query.relevant_doc_ids)
        ranking = document_ranking(ranked_chunk_ids, chunk_doc)
        ranks = [rank for rank, doc in enumerate(ranking, start=1) if doc in relevant]
        total = len(relevant)
    else:
        ranks, total = [], 0
    return {"hit_rank": ranks[0] if ranks else None, "relevant_ranks": ranks, "relevant_total": total}
