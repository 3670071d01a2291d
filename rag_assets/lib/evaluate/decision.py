"""The decision an evaluation ends with: at the context budget a team can afford, which configuration to
ship, ranked with every other one by the same rule, and stored so that ``ask`` uses it.

The rule (``rank_configurations``), over the built-in configurations of the newest run:

1. A whole-document strategy (``Strategy.whole``: one chunk per document) competes at a budget only when
   its largest document fits it: a page that does not fit gives an empty context, and at a budget where
   every page fits, a page is a chunk like any other. It stays in the tables either way.
2. Highest success at the budget (the needle's chunk inside the context ``ask`` builds: whole chunks in
   rank order until the first that does not fit), as a mean over needles.
3. Ties: the higher MRR; then the smaller mean context at the budget (the cheaper prompt); then the
   model, strategy and retriever names in order, so the pick never depends on the order of rows.

External retrievers are compared with the pick (``comparisons.py``), never picked: a team's own index
is the thing judged, not a configuration this project can build for ``ask``.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa

from rag_assets.lib.evaluate import catalog
from rag_assets.lib.evaluate.measures import comparison, table_exists
from rag_assets.lib.evaluate.multiplicity import METHODS
from rag_assets.lib.evaluate.size_view import whole_strategies
from rag_assets.lib.ingest.chunking import STRATEGIES
from rag_assets.lib.retrieve.context import TOKENIZER
from rag_assets.lib.store.stamps import EXTERNAL_MODEL

ALPHA = 0.05


@dataclass(frozen=True)
class DecisionRule:
    """What a decision is made at: the context budget (ask's by default), the budgets every figure is
    computed at, how the family of paired tests is adjusted and the level it is read at."""

    budget: int = 1024
    budgets: tuple[int, ...] = catalog.DEFAULT_BUDGETS
    adjustment: str = "holm"
    alpha: float = ALPHA

    def __post_init__(self) -> None:
        if self.adjustment not in METHODS:
            raise ValueError(f"unknown adjustment {self.adjustment!r}; choose one of {', '.join(METHODS)}")
        if self.budget < 1 or any(budget < 1 for budget in self.budgets):
            raise ValueError("a context budget is a positive number of tokens")

    @property
    def all_budgets(self) -> tuple[int, ...]:
        """The budgets computed: the listed ones and the decision's."""
        return tuple(sorted({*self.budgets, self.budget}))

    @property
    def measure(self) -> str:
        return catalog.budget_measure(self.budget).name


def _largest_chunk(connection: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """{strategy: its largest chunk's content tokens}, from ``chunk_stats``; {} without it."""
    if not table_exists(connection, "chunk_stats"):
        return {}
    return dict(connection.sql("SELECT strategy, max(max_content_tokens) FROM chunk_stats GROUP BY strategy").fetchall())


def competes(strategy: str, budget: int, largest: dict[str, int], whole: set[str] | None = None) -> bool:
    """Whether a configuration of ``strategy`` competes at ``budget`` (rule 1 of the module); ``whole`` names the
    strategies that cut nothing (default: the built-in ones)."""
    whole = whole if whole is not None else {name for name, s in STRATEGIES.items() if s.whole}
    return strategy not in whole or largest.get(strategy, budget + 1) <= budget


def rank_configurations(connection: duckdb.DuckDBPyConnection, rule: DecisionRule) -> list[dict]:
    """Every built-in configuration of the newest run with its figures, the ones that compete first in the
    rule's order, then the others (``competes`` False), each with its ``rank`` (None for those)."""
    name = rule.measure
    rows = [row for row in comparison(connection, ("model", "strategy", "retriever")).to_pylist()
            if row["model"] != EXTERNAL_MODEL and row.get(name) is not None]
    largest, whole = _largest_chunk(connection), whole_strategies(connection)
    for row in rows:
        row["competes"] = competes(row["strategy"], rule.budget, largest, whole)
    order = lambda r: (-r[name], -r["mrr"], r[f"context_at_{rule.budget}_tokens"], r["model"], r["strategy"],  # noqa: E731
                       r["retriever"])
    ranked = sorted((r for r in rows if r["competes"]), key=order)
    for position, row in enumerate(ranked, start=1):
        row["rank"] = position
    others = sorted((r for r in rows if not r["competes"]), key=order)
    for row in others:
        row["rank"] = None
    return ranked + others


def write_decision(connection: duckdb.DuckDBPyConnection, rule: DecisionRule) -> list[dict]:
    """Replace ``ranking`` (every built-in configuration by the rule, with its figures at the budget) and
    ``decision`` (the rule, the tokenizer and the pick); the ranking as rows."""
    ranked = rank_configurations(connection, rule)
    name, context = rule.measure, f"context_at_{rule.budget}_tokens"
    ranking = pa.Table.from_pylist(
        [{"rank": r["rank"], "model": r["model"], "strategy": r["strategy"], "retriever": r["retriever"],
          "competes": r["competes"], "needles": r["needles"], "queries": r["queries"], "success": r[name],
          "success_low": r[f"{name}_low"], "success_high": r[f"{name}_high"], "mrr": r["mrr"],
          "mrr_low": r["mrr_low"], "mrr_high": r["mrr_high"], "context_tokens": r[context],
          "median_latency_ms": r["median_latency_ms"]} for r in ranked],
        schema=pa.schema([("rank", pa.int64()), ("model", pa.string()), ("strategy", pa.string()),
                          ("retriever", pa.string()), ("competes", pa.bool_()), ("needles", pa.int64()),
                          ("queries", pa.int64()), ("success", pa.float64()), ("success_low", pa.float64()),
                          ("success_high", pa.float64()), ("mrr", pa.float64()), ("mrr_low", pa.float64()),
                          ("mrr_high", pa.float64()), ("context_tokens", pa.float64()),
                          ("median_latency_ms", pa.float64())]))
    pick = next((r for r in ranked if r["rank"] == 1), None)
    decision = pa.Table.from_pylist([{
        "budget": rule.budget, "measure": name, "adjustment": rule.adjustment, "alpha": rule.alpha,
        "tokenizer": TOKENIZER, "model": pick and pick["model"], "strategy": pick and pick["strategy"],
        "retriever": pick and pick["retriever"]}])
    for table, rows in (("ranking", ranking), ("decision", decision)):
        connection.register(f"incoming_{table}", rows)
        connection.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM incoming_{table}")
        connection.unregister(f"incoming_{table}")
    return ranked


def stored_decision(connection: duckdb.DuckDBPyConnection) -> dict | None:
    """The newest evaluation's decision (budget, measure, adjustment, alpha, tokenizer, and the pick's model,
    strategy and retriever, None when nothing competed); None before any decision was stored."""
    if not table_exists(connection, "decision"):
        return None
    rows = connection.sql("SELECT * FROM decision").to_arrow_table().to_pylist()
    return rows[0] if rows else None


def stored_ranking(connection: duckdb.DuckDBPyConnection) -> list[dict]:
    """The stored ranking, competing configurations first in rank order; [] before any."""
    if not table_exists(connection, "ranking"):
        return []
    return connection.sql("SELECT * FROM ranking ORDER BY rank NULLS LAST, model, strategy, retriever"
                          ).to_arrow_table().to_pylist()
