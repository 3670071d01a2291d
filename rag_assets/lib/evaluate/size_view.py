"""The size view: success within the context budget against chunk size, one line per family of strategies (an
entry of the strategies file and its sweep, ours or a team's splitter), with intervals; and the same at fixed
k, where larger chunks win by construction (each returned chunk brings more text), so a team sees why a fixed-k
comparison favours them and the budget does not. Each point keeps what it costs to embed (tokens embedded, and
seconds at the model's measured rate) beside it.

``strategies`` (a table of this evaluation's strategy definitions: family, kind, unit, size, overlap, whole) is
written with the metrics; ``size_view`` is computed from it, ``metrics`` and ``chunk_stats``: every figure in it
is the one the comparison table stores.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import duckdb
import pyarrow as pa

from rag_assets.lib.evaluate.measures import comparison, table_exists
from rag_assets.lib.ingest.chunking import STRATEGIES, Strategy
from rag_assets.lib.store.stamps import EXTERNAL_MODEL

FIXED_K = (4, 8)  # success at k shown beside the budget (catalog.K_VALUES)

STRATEGY_SCHEMA = pa.schema([
    ("strategy", pa.string()), ("family", pa.string()), ("kind", pa.string()), ("unit", pa.string()),
    ("size", pa.int64()), ("overlap", pa.int64()), ("header", pa.bool_()), ("whole", pa.bool_()),
    ("splitter", pa.string()), ("library", pa.string()),
])


def strategy_rows(strategies: Mapping[str, Strategy], libraries: Mapping[str, str] | None = None) -> list[dict]:
    """One row per strategy: its family (the size view's line), kind, unit, size, overlap and library."""
    libraries = libraries or {}
    return [{"strategy": name, "family": strategy.line, "kind": strategy.kind, "unit": strategy.unit,
             "size": strategy.target, "overlap": strategy.overlap, "header": strategy.header, "whole": strategy.whole,
             "splitter": strategy.splitter, "library": libraries.get(name, "")}
            for name, strategy in strategies.items()]


def write_strategies(connection: duckdb.DuckDBPyConnection, rows: Iterable[Mapping]) -> None:
    """Replace ``strategies`` with these definitions."""
    table = pa.Table.from_pylist(list(rows), schema=STRATEGY_SCHEMA)
    connection.register("incoming_strategies", table)
    connection.execute("CREATE OR REPLACE TABLE strategies AS SELECT * FROM incoming_strategies")
    connection.unregister("incoming_strategies")


def whole_strategies(connection: duckdb.DuckDBPyConnection) -> set[str]:
    """The strategies that cut nothing (one chunk per document): from ``strategies``, else the built-in ones."""
    if table_exists(connection, "strategies"):
        return {row[0] for row in connection.sql("SELECT strategy FROM strategies WHERE whole").fetchall()}
    return {name for name, strategy in STRATEGIES.items() if strategy.whole}


def size_view_rows(connection: duckdb.DuckDBPyConnection, budget: int) -> list[dict]:
    """Every built-in configuration of a strategy that cuts at a size, with its family, size and overlap, success
    within ``budget`` and at each ``FIXED_K`` (with intervals) and its embedding cost; ordered by model, retriever,
    family, size and overlap."""
    if not table_exists(connection, "strategies"):
        return []
    definitions = {row["strategy"]: row for row in connection.sql("SELECT * FROM strategies").to_arrow_table().to_pylist()}
    costs = {}
    if table_exists(connection, "chunk_stats"):
        costs = {(r["model"], r["strategy"]): r for r in connection.sql(
            "SELECT model, strategy, tokens_embedded, embedding_seconds FROM chunk_stats").to_arrow_table().to_pylist()}
    name = f"success_at_{budget}_tokens"
    rows = []
    for row in comparison(connection, ("model", "strategy", "retriever")).to_pylist():
        definition = definitions.get(row["strategy"])
        if row["model"] == EXTERNAL_MODEL or definition is None or definition["whole"] or not definition["size"] \
                or row.get(name) is None:
            continue
        cost = costs.get((row["model"], row["strategy"]), {})
        point = {"model": row["model"], "retriever": row["retriever"], "family": definition["family"],
                 "kind": definition["kind"], "unit": definition["unit"], "size": definition["size"],
                 "overlap": definition["overlap"], "strategy": row["strategy"], "budget": budget,
                 "success": row[name], "success_low": row[f"{name}_low"], "success_high": row[f"{name}_high"],
                 "tokens_embedded": cost.get("tokens_embedded"), "embedding_seconds": cost.get("embedding_seconds")}
        for k in FIXED_K:
            point |= {f"success_at_{k}": row[f"success_at_{k}"], f"success_at_{k}_low": row[f"success_at_{k}_low"],
                      f"success_at_{k}_high": row[f"success_at_{k}_high"]}
        rows.append(point)
    return sorted(rows, key=lambda r: (r["model"], r["retriever"], r["family"], r["unit"], r["size"], r["overlap"]))


def write_size_view(connection: duckdb.DuckDBPyConnection, budget: int) -> list[dict]:
    """Replace ``size_view`` with ``size_view_rows``; the rows."""
    rows = size_view_rows(connection, budget)
    connection.execute("DROP TABLE IF EXISTS size_view")
    if rows:
        connection.register("incoming_size_view", pa.Table.from_pylist(rows))
        connection.execute("CREATE TABLE size_view AS SELECT * FROM incoming_size_view")
        connection.unregister("incoming_size_view")
    return rows


def swept_families(rows: Iterable[Mapping]) -> dict[tuple[str, str, str], list[Mapping]]:
    """{(model, retriever, family): its points} for the families with more than one size or overlap."""
    families: dict[tuple[str, str, str], list[Mapping]] = {}
    for row in rows:
        families.setdefault((row["model"], row["retriever"], row["family"]), []).append(row)
    return {key: points for key, points in families.items() if len(points) > 1}


def _figure(value, low, high) -> str:
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def size_lines(rows: list[Mapping], model: str, retriever: str, budget: int) -> list[str]:
    """For the verdict: each swept family of the pick's model and retriever, success within the budget and at the
    largest fixed k against size (and overlap), and the embedding cost."""
    k = FIXED_K[-1]
    lines = []
    for (m, r, family), points in sorted(swept_families(rows).items()):
        if (m, r) != (model, retriever):
            continue
        unit = "t" if points[0]["unit"] == "tokens" else "c"
        cells = [f"{p['size']}{unit}" + (f"+{p['overlap']}" if p["overlap"] else "") + ": "
                 f"S@{budget}t {_figure(p['success'], p['success_low'], p['success_high'])}, "
                 f"S@{k} {_figure(p[f'success_at_{k}'], p[f'success_at_{k}_low'], p[f'success_at_{k}_high'])}"
                 + (f", {p['tokens_embedded']:,} tokens embedded" if p["tokens_embedded"] is not None else "")
                 for p in points]
        lines.append(f"{family} ({points[0]['kind']}): " + "; ".join(cells))
    return lines
