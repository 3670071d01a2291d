"""What a chunking strategy costs: sizes, tokens spent on headers, truncation, answers destroyed.

- Characters are of ``content`` (the chunk's own words).
- Tokens are counted with the embedding model's own tokenizer over the embedded ``text``, without
  the special tokens the encoder adds; ``header_tokens`` are those of the header alone.
- A chunk is truncated when its tokens plus the encoder's special tokens exceed the model's window
  (256 word-pieces for all-MiniLM-L6-v2): the encoder silently drops the rest.
- An answer is destroyed when no chunk of the strategy holds the needle whole in its document
  span: no retriever can find it, whatever its ranking.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from rag_assets.lib.documents import canonical_texts
from rag_assets.lib.evalset import needle_holders, needles_from_rows


def character_stats(contents: Sequence[str]) -> dict:
    sizes = [len(content) for content in contents]
    return {
        "chunks": len(sizes),
        "mean_characters": sum(sizes) / len(sizes) if sizes else 0.0,
        "max_characters": max(sizes, default=0),
    }


def answers_destroyed(holders: Mapping[str, set[str]]) -> list[str]:
    """Needle ids that no chunk holds whole, sorted."""
    return sorted(needle for needle, chunk_ids in holders.items() if not chunk_ids)


def truncated(count: int, special_tokens: int, window: int | None) -> bool:
    """Whether the encoder drops part of a text of ``count`` tokens (a model without a window never does)."""
    return window is not None and count + special_tokens > window


def token_stats(tokens: Sequence[int], header_tokens: Sequence[int], special_tokens: int, window: int | None) -> dict:
    total = sum(tokens)
    headers = sum(header_tokens)
    return {
        "tokens_embedded": total,
        "header_tokens": headers,
        "header_token_share": headers / total if total else 0.0,
        "truncated_chunks": sum(truncated(count, special_tokens, window) for count in tokens),
        "window": window,
    }


def quality_row(strategy: str, chunks: Sequence[Mapping], eval_rows: Iterable[Mapping],
                  documents: Iterable[Mapping]) -> dict:
    """One strategy's row: chunk sizes, and the needles no chunk holds whole (answers destroyed).

    ``chunks`` are chunk rows, ``eval_rows`` evaluation-set rows, ``documents`` extracted-text rows.
    """
    needles = needles_from_rows(eval_rows)
    holders = needle_holders(needles, chunks, canonical_texts(documents))
    destroyed = answers_destroyed(holders)
    return {"strategy": strategy, **character_stats([chunk["content"] for chunk in chunks]),
            "needles": len(needles), "answers_destroyed": len(destroyed), "destroyed_needles": destroyed}
