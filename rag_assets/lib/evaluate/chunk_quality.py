"""What a chunking strategy costs in answers: the chunk_quality row of one strategy.

- Sizes are characters of ``content`` (the chunk's own words; ``ingest.chunking.character_stats``) and
  the context tokens a quoted chunk costs (``retrieve.context``): a strategy whose largest chunk does not
  fit a context budget cannot be quoted whole there.
  The tokens a strategy spends on headers and the chunks a model's window truncates are counted per
  model with the embeddings (``embed.partition``).
- An answer is destroyed when no chunk of the strategy holds the needle whole in its content
  (``evalsets.judging``; an overlap tail does not rescue it): no retriever can find it, whatever its
  ranking.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from rag_assets.lib.evalsets.judging import needle_holders
from rag_assets.lib.evalsets.queries import needles_from_rows
from rag_assets.lib.ingest.chunking import character_stats, chunking_code_version
from rag_assets.lib.ingest.documents import canonical_texts
from rag_assets.lib.retrieve.context import count_tokens
from rag_assets.lib.store.stamps import PIPELINE_VERSION


def quality_code_version() -> str:
    """What a chunk_quality row depends on: the chunking definition and the judging (``PIPELINE_VERSION``)."""
    return f"{chunking_code_version()}-{PIPELINE_VERSION}"


def answers_destroyed(holders: Mapping[str, set[str]]) -> list[str]:
    """Needle ids that no chunk holds whole, sorted."""
    return sorted(needle for needle, chunk_ids in holders.items() if not chunk_ids)


def quality_row(strategy: str, chunks: Sequence[Mapping], eval_rows: Iterable[Mapping],
                  documents: Iterable[Mapping]) -> dict:
    """One strategy's row: chunk sizes, and the needles no chunk holds whole (answers destroyed).

    ``chunks`` are chunk rows, ``eval_rows`` evaluation-set rows, ``documents`` extracted-text rows.
    """
    needles = needles_from_rows(eval_rows)
    holders = needle_holders(needles, chunks, canonical_texts(documents))
    destroyed = answers_destroyed(holders)
    tokens = count_tokens([chunk["content"] for chunk in chunks])
    return {"strategy": strategy, **character_stats([chunk["content"] for chunk in chunks]),
            "mean_content_tokens": sum(tokens) / len(tokens) if tokens else 0.0,
            "max_content_tokens": max(tokens, default=0), "needles": len(needles), "answers_destroyed": len(destroyed), "destroyed_needles": destroyed}
