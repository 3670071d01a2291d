"""The needle queries a configuration missed in the newest evaluation run, for a person to look at
(``retrieval_metrics``' ``worst_queries`` preview): the question, the needle and the chunk it put first."""

from __future__ import annotations

from pathlib import Path

from rag_assets.lib.formats.markdown import excerpt
from rag_assets.lib.store import paths


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


def worst_queries_of_pick(database: Path, home: Path, configurations: list[tuple[str, str]],
                          ranking: list[dict]) -> list[dict]:
    """``worst_queries`` of the configuration the report draws, the decision's pick (read-only on the file)."""
    import duckdb

    from rag_assets.lib.evaluate.report import focus

    if not configurations:
        return []
    with duckdb.connect(str(database), read_only=True) as connection:
        return worst_queries(connection, home, *focus(configurations, ranking))
