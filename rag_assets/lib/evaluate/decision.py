"""The decision an evaluation ends with: at the context budget a team can afford, which configuration to
ship, ranked with every other one by the same rule, and stored so that ``ask`` uses it.

The rule (``rank_configurations``), over the built-in configurations of the newest run:

1. A whole-document strategy (``Strategy.whole``: one chunk per document) competes at a budget only when
   its largest document fits it: a page that does not fit gives an empty context, and at a budget where
   every page fits, a page is a chunk like any other. It stays in the tables either way.
2. Highest success at the budget (the needle's chunk inside the context ``ask`` builds: whole chunks in
   rank order until the first that does not fit), as a mean over needles.
3. Ties: the higher MRR; then, among configurations equal on both, the cheaper (``equivalence.cost_key``: the
   lower median query latency, then the smaller context at the budget, then exact before approximate search,
   then the fewer tokens embedded for the index), never the name: names order only configurations whose every
   cost is the same, so the pick never depends on the order of rows. When the runner-up is tied with the pick,
   the decision says on what the pick was chosen (``tie_broken_by``).
4. Beside the pick, the cheaper equivalent: the cheapest competing configuration that is non-inferior to the
   pick within ``margin`` by a one-sided paired test over needles (``equivalence.py``), adjusted with the run's
   family (``comparisons.py``), with its cost ratio; and for the runner-up and the cheaper equivalent, what the
   needles can tell (``power.py``): the smallest difference they detect at 80 % power, the needles the
   observed difference needs.

External retrievers are compared with the pick (``comparisons.py``), never picked: a team's own index
is the thing judged, not a configuration this project can build for ``ask``.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa

from rag_assets.lib.evaluate import catalog
from rag_assets.lib.evaluate.equivalence import MARGIN, approximate, cost_key, cost_ratio, tie_break
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
    margin: float = MARGIN  # the non-inferiority margin of the cheaper equivalent, in success at the budget

    def __post_init__(self) -> None:
        if not 0 <= self.margin < 1:
            raise ValueError("the non-inferiority margin is a share of success at the budget, from 0 to below 1")
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


def _tokens_embedded(connection: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], int]:
    """{(model, strategy): tokens embedded for its index}, from ``chunk_stats``; {} without it."""
    if not table_exists(connection, "chunk_stats"):
        return {}
    return {(model, strategy): tokens for model, strategy, tokens in
            connection.sql("SELECT model, strategy, tokens_embedded FROM chunk_stats").fetchall()}


def rank_configurations(connection: duckdb.DuckDBPyConnection, rule: DecisionRule) -> list[dict]:
    """Every built-in configuration of the newest run with its figures, the ones that compete first in the
    rule's order, then the others (``competes`` False), each with its ``rank`` (None for those)."""
    name = rule.measure
    rows = [row for row in comparison(connection, ("model", "strategy", "retriever")).to_pylist()
            if row["model"] != EXTERNAL_MODEL and row.get(name) is not None]
    largest, whole = _largest_chunk(connection), whole_strategies(connection)
    embedded = _tokens_embedded(connection)
    for row in rows:
        row["competes"] = competes(row["strategy"], rule.budget, largest, whole)
        row["context_tokens"] = row[f"context_at_{rule.budget}_tokens"]
        row["tokens_embedded"] = embedded.get((row["model"], row["strategy"]))
    order = lambda r: (-r[name], -r["mrr"], *cost_key(r), r["model"], r["strategy"], r["retriever"])  # noqa: E731
    ranked = sorted((r for r in rows if r["competes"]), key=order)
    for position, row in enumerate(ranked, start=1):
        row["rank"] = position
    others = sorted((r for r in rows if not r["competes"]), key=order)
    for row in others:
        row["rank"] = None
    return ranked + others


RANKING_SCHEMA = pa.schema([
    ("rank", pa.int64()), ("model", pa.string()), ("strategy", pa.string()), ("retriever", pa.string()),
    ("competes", pa.bool_()), ("needles", pa.int64()), ("queries", pa.int64()), ("success", pa.float64()),
    ("success_low", pa.float64()), ("success_high", pa.float64()), ("mrr", pa.float64()), ("mrr_low", pa.float64()),
    ("mrr_high", pa.float64()), ("context_tokens", pa.float64()), ("median_latency_ms", pa.float64()),
    ("approximate", pa.bool_()), ("tokens_embedded", pa.int64())])

# what a comparison's needles can tell (``power.Sensitivity``), for the runner-up and the cheaper equivalent
SENSITIVITY = (("needles", pa.int64()), ("discordant_rate", pa.float64()), ("difference", pa.float64()),
               ("detectable_difference", pa.float64()), ("needles_needed", pa.int64()))
DECISION_SCHEMA = pa.schema([
    ("budget", pa.int64()), ("measure", pa.string()), ("adjustment", pa.string()), ("alpha", pa.float64()),
    ("margin", pa.float64()), ("tokenizer", pa.string()), ("model", pa.string()), ("strategy", pa.string()),
    ("retriever", pa.string()),
    ("tied_with", pa.string()),  # the runner-up, when it equals the pick on the rule's measures
    ("tie_broken_by", pa.string()),  # then, what set the pick first: "lower latency (a vs b ms ...)"
    ("cheaper_tested", pa.int64()),  # competing configurations cheaper than the pick, each tested
    ("equivalent_model", pa.string()), ("equivalent_strategy", pa.string()), ("equivalent_retriever", pa.string()),
    ("equivalent_success", pa.float64()), ("equivalent_latency_ms", pa.float64()),
    ("equivalent_cost_ratio", pa.float64()), ("equivalent_p_adjusted", pa.float64()),
    *((f"runner_up_{name}", kind) for name, kind in SENSITIVITY),
    *((f"equivalent_{name}", kind) for name, kind in SENSITIVITY),
])


def configuration_of(row: dict) -> tuple[str, str, str]:
    return row["model"], row["strategy"], row["retriever"]


def tied(a: dict, b: dict) -> bool:
    """Whether two ranking rows are equal on the rule's measures (success at the budget, then MRR)."""
    return abs(a["success"] - b["success"]) <= 1e-12 and abs(a["mrr"] - b["mrr"]) <= 1e-12


def _replace(connection: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> None:
    connection.register(f"incoming_{table}", rows)
    connection.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM incoming_{table}")
    connection.unregister(f"incoming_{table}")


def ranking_rows(ranked: list[dict], rule: DecisionRule) -> list[dict]:
    """The rows of ``ranking``: each configuration's rank and its figures at the budget, with its costs."""
    name = rule.measure
    return [{"rank": r["rank"], "model": r["model"], "strategy": r["strategy"], "retriever": r["retriever"],
             "competes": r["competes"], "needles": r["needles"], "queries": r["queries"], "success": r[name],
             "success_low": r[f"{name}_low"], "success_high": r[f"{name}_high"], "mrr": r["mrr"],
             "mrr_low": r["mrr_low"], "mrr_high": r["mrr_high"], "context_tokens": r["context_tokens"],
             "median_latency_ms": r["median_latency_ms"], "approximate": approximate(r["retriever"]),
             "tokens_embedded": r.get("tokens_embedded")} for r in ranked]


def write_decision(connection: duckdb.DuckDBPyConnection, rule: DecisionRule) -> list[dict]:
    """Replace ``ranking`` (every built-in configuration by the rule, with its figures at the budget) and
    ``decision`` (the rule, the tokenizer, the pick and how a tie with the runner-up was broken; the cheaper
    equivalent and the needles' sensitivity are added by ``complete_decision`` once the run's family of tests
    is adjusted); the ranking as rows."""
    ranked = rank_configurations(connection, rule)
    rows = ranking_rows(ranked, rule)
    _replace(connection, "ranking", pa.Table.from_pylist(rows, schema=RANKING_SCHEMA))
    competing = [r for r in rows if r["rank"] is not None]
    pick = competing[0] if competing else None
    decision = {"budget": rule.budget, "measure": rule.measure, "adjustment": rule.adjustment, "alpha": rule.alpha,
                "margin": rule.margin, "tokenizer": TOKENIZER, "model": pick and pick["model"],
                "strategy": pick and pick["strategy"], "retriever": pick and pick["retriever"]}
    if pick and len(competing) > 1 and tied(pick, competing[1]):
        decision |= {"tied_with": name_of(configuration_of(competing[1])),
                     "tie_broken_by": tie_break(pick, competing[1])}
    _replace(connection, "decision", pa.Table.from_pylist([decision], schema=DECISION_SCHEMA))
    return ranked


def name_of(configuration: tuple[str, str, str]) -> str:
    model, strategy, retriever = configuration
    return f"{model}: {strategy} x {retriever}"


def cheaper_than(pick: dict, competing: list[dict]) -> list[dict]:
    """The competing configurations that cost less than the pick (``equivalence.cost_key``), cheapest first."""
    return sorted((r for r in competing if cost_key(r) < cost_key(pick)), key=lambda r: (*cost_key(r),
                                                                                        configuration_of(r)))


def complete_decision(connection: duckdb.DuckDBPyConnection, ranking: list[dict], tests: list[dict],
                      rule: DecisionRule, sensitivity_of) -> dict:
    """Add to the stored decision the cheaper equivalent (the cheapest configuration cheaper than the pick whose
    non-inferiority test, family ``non_inferiority`` of ``tests``, holds after adjustment) and, for the runner-up
    and the cheaper equivalent, ``sensitivity_of(pick, other)`` (a ``power.Sensitivity``); the decision."""
    decision = stored_decision(connection) or {}
    rows = [r for r in ranking_rows(ranking, rule) if r["rank"] is not None]
    if not rows:
        return decision
    pick = rows[0]
    cheaper = cheaper_than(pick, rows)
    held = {(t["model"], t["a_strategy"], t["a_retriever"]): t for t in tests
            if t["family"] == "non_inferiority" and t["p_adjusted"] is not None and t["p_adjusted"] < rule.alpha}
    equivalent = next((r for r in cheaper if configuration_of(r) in held), None)
    decision["cheaper_tested"] = len(cheaper)
    if equivalent is not None:
        decision |= {"equivalent_model": equivalent["model"], "equivalent_strategy": equivalent["strategy"],
                     "equivalent_retriever": equivalent["retriever"], "equivalent_success": equivalent["success"],
                     "equivalent_latency_ms": equivalent["median_latency_ms"],
                     "equivalent_cost_ratio": cost_ratio(equivalent, pick),
                     "equivalent_p_adjusted": held[configuration_of(equivalent)]["p_adjusted"]}
    for prefix, other in (("runner_up", rows[1] if len(rows) > 1 else None), ("equivalent", equivalent)):
        if other is None:
            continue
        found = sensitivity_of(configuration_of(pick), configuration_of(other))
        decision |= {f"{prefix}_needles": found.needles, f"{prefix}_discordant_rate": found.discordant_rate,
                     f"{prefix}_difference": found.observed_difference,
                     f"{prefix}_detectable_difference": found.detectable_difference,
                     f"{prefix}_needles_needed": found.needles_needed}
    _replace(connection, "decision", pa.Table.from_pylist([decision], schema=DECISION_SCHEMA))
    return decision


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
