"""Small samples of an output for a person to look at (the UI's table previews), and Markdown that is
safe to render when it quotes the corpus.

Corpus text is data, never markup: ``escape_markdown`` turns what a document says into text that a
Markdown renderer shows as written (no live HTML, no table break from a ``|``, no link or image).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from rag_assets.lib import paths

EXCERPT = 160  # characters of a chunk or needle shown in a preview


def escape_markdown(text: object) -> str:
    """``text`` as literal Markdown: HTML escaped, table pipes and Markdown punctuation backslashed,
    newlines folded to spaces (one table cell)."""
    escaped = html.escape(" ".join(str(text).split()), quote=False)
    return re.sub(r"([\\`*_{}\[\]()#+!|~>])", r"\\\1", escaped)


def excerpt(text: str | None, limit: int = EXCERPT) -> str:
    folded = " ".join((text or "").split())
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def sample_chunks(rows: list[dict], count: int = 6) -> list[dict]:
    """``count`` chunks spread evenly over the rows (first, last and between), with their section,
    offsets and an excerpt of their content."""
    if not rows:
        return []
    step = max(1, (len(rows) - 1) / max(1, count - 1))
    picked = sorted({min(len(rows) - 1, round(i * step)) for i in range(count)})
    return [{"chunk_id": rows[i]["chunk_id"], "section": rows[i]["section"] or "", "start": rows[i]["start"],
             "end": rows[i]["end"], "content": excerpt(rows[i]["content"])} for i in picked]


def worst_queries(connection, home: Path, model: str, strategy: str, retriever: str,
                  limit: int = 10) -> list[dict]:
    """The needle queries the configuration missed in the newest run (no correct chunk in its list),
    with the question, the needle and the chunk it put first."""
    eval_set = paths.stored_partition(home, "eval_set")
    chunks = paths.stored_partition(home, "chunks", [("strategy", strategy)])
    if not eval_set.exists() or not chunks.exists():
        return []
    rows = connection.execute("""
        SELECT r.query_id, e.question, e.spans[1].text AS needle, r.chunk_ids[1] AS top_chunk,
               c.content AS top_content, r.distances[1] AS top_distance
        FROM latest_results AS r
        JOIN read_parquet(?) AS e USING (query_id)
        LEFT JOIN read_parquet(?) AS c ON c.chunk_id = r.chunk_ids[1]
        WHERE r.model = ? AND r.strategy = ? AND r.retriever = ? AND r.query_kind = 'needle' AND r.hit_rank IS NULL
        ORDER BY r.query_id LIMIT ?""", [str(eval_set), str(chunks), model, strategy, retriever, limit]).fetchall()
    return [{"query_id": q, "question": excerpt(question), "needle": excerpt(needle), "top_chunk": top or "",
             "top_content": excerpt(content), "top_distance": round(distance, 4) if distance is not None else None}
            for q, question, needle, top, content, distance in rows]


def worst_queries_of_default(database: Path, home: Path, configurations: list[tuple[str, str]]) -> list[dict]:
    """``worst_queries`` of the configuration the report draws (read-only on the DuckDB file)."""
    import duckdb

    from rag_assets.lib.comparisons import STRATEGY_RETRIEVER
    from rag_assets.lib.report import focus

    if not configurations:
        return []
    model, strategy = focus(configurations)
    with duckdb.connect(str(database), read_only=True) as connection:
        return worst_queries(connection, home, model, strategy, STRATEGY_RETRIEVER)
