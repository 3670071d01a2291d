"""Judging: which chunks answer a query, and where they landed in a ranked list.

Judgements are spans, never chunk ids: a chunk holds a needle when the needle lies whole, folded as a
reader compares text (``folding.fold``), inside the chunk's own ``content``, ``canonical[start:end]``, the words quoted back to a user;
a header the chunker copied and an overlap tail carried from the chunk before (both embedded, in
``text``) never count, and a needle that runs past a chunk's end is held by no chunk (an answer the
strategy destroyed). So one evaluation set serves every chunking strategy. The retrievers
(``rag_assets.lib.retrieve``) rank chunks; ``judge`` says which ranks hold an answer, by span for
needle queries and by document for BEIR-style queries.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from rag_assets.lib.evalsets.queries import DOCUMENT, NEEDLE, Needle, Query
from rag_assets.lib.ingest.folding import fold


def document_ranking(ranked_chunk_ids: Sequence[str], chunk_doc: Mapping[str, str]) -> list[str]:
    """Chunk ranks rolled up to document ranks: each document ranks where its best chunk does. A returned item
    of no known document (an external retriever's passage that could not be located) keeps its rank as a
    document of its own, which is never relevant."""
    seen: dict[str, None] = {}
    for chunk in ranked_chunk_ids:
        seen.setdefault(chunk_doc.get(chunk, chunk), None)
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


def holds_needle(canonical: str, start: int, end: int, needle: str) -> bool:
    """True when a chunk's content, ``canonical[start:end]``, contains the whole needle, both folded
    (``folding.fold``: whitespace, typographic quotes and dashes, ...)."""
    return fold(needle) in fold(canonical[start:end])


def chunks_by_document(chunks: Iterable[Mapping]) -> dict[str, list[Mapping]]:
    by_doc: dict[str, list[Mapping]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk["doc_id"], []).append(chunk)
    return by_doc


def span_holders(
    spans: Iterable[tuple[str, str]], by_doc: Mapping[str, list[Mapping]], documents: Mapping[str, str]
) -> set[str]:
    """Ids of the chunks whose content holds whole at least one of the (doc_id, text) spans.

    Chunks are rows with ``chunk_id``, ``doc_id``, ``start`` and ``end`` (the content's offsets).
    """
    holders = set()
    for doc_id, text in spans:
        canonical = documents.get(doc_id)
        if canonical is None:  # a page whose text was not extracted (failed) holds nothing
            continue
        holders.update(
            chunk["chunk_id"] for chunk in by_doc.get(doc_id, ())
            if holds_needle(canonical, chunk["start"], chunk["end"], text)
        )
    return holders


def needle_holders(
    needles: Iterable[Needle], chunks: Iterable[Mapping], documents: Mapping[str, str]
) -> dict[str, set[str]]:
    """For each needle id, the ids of the chunks whose content holds it whole."""
    by_doc = chunks_by_document(chunks)
    return {needle.id: span_holders([(needle.doc_id, needle.needle)], by_doc, documents) for needle in needles}
