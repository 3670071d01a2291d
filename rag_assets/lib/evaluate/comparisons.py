"""The paired tests of one evaluation run, one family, stored as ``comparisons``.

All at the decision's context budget (``decision.DecisionRule``), on success there (the needle's chunk in
the context ``ask`` builds), with the needle as the pair (a needle's mean over its phrasings):

- ``verdict``: the pick against every other competing built-in configuration; the first is the runner-up,
  and those whose adjusted p is not below alpha are not distinguishable from the pick.
- ``question``: the questions the field asks of a corpus, on the pick's model and retriever (or strategy):
  does the header help (``boundaries_header`` vs ``boundaries``), does overlap help (``blind_overlap`` vs
  ``blind``), does overlap help on top of the header (``boundaries_header_overlap`` vs
  ``boundaries_header``), hybrid against dense, each second stage against the list it re-scores.
- ``external``: each external retriever against the pick, on the needles both answered.
- ``non_inferiority``: each competing configuration cheaper than the pick against it, one-sided: is it worse by
  no more than ``decision.margin`` (``equivalence.py``)? The cheapest that is becomes the decision's cheaper
  equivalent. Its ``margin`` column holds the margin; a difference test's is NULL.

Every p-value of the family is adjusted together (Holm by default, ``multiplicity.py``) and stored beside
the raw one; "significant" means adjusted p below alpha (for ``non_inferiority``: non-inferior).
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa

from rag_assets.lib.evaluate.catalog import UNIT
from rag_assets.lib.evaluate.catalog import measure as declared
from rag_assets.lib.evaluate.decision import (
    DecisionRule,
    cheaper_than,
    complete_decision,
    configuration_of,
    ranking_rows,
)
from rag_assets.lib.evaluate.decision import name_of as name_of  # where the verdict and the page take it
from rag_assets.lib.evaluate.equivalence import non_inferiority
from rag_assets.lib.evaluate.multiplicity import METHODS, adjust
from rag_assets.lib.evaluate.paired_tests import paired_test, sign_test
from rag_assets.lib.evaluate.power import Sensitivity, sensitivity
from rag_assets.lib.retrieve.engine import RETRIEVERS, rerankers
from rag_assets.lib.store.stamps import EXTERNAL_MODEL  # an external retriever's rows

RERANKERS = rerankers()  # the second stages, each compared with the list it re-scores


@dataclass(frozen=True)
class Question:
    """A question the field asks of a corpus: configuration a against b, which differ in one ingredient."""

    key: str
    asks: str  # how the verdict puts it
    a: str  # the strategy (``by == "strategy"``) or retriever a has
    b: str
    by: str  # what differs: "strategy" (on the pick's model and retriever) or "retriever" (model and strategy)


QUESTIONS = (
    Question("header", "does the header help?", "boundaries_header", "boundaries", "strategy"),
    Question("overlap", "does overlap help?", "blind_overlap", "blind", "strategy"),
    Question("overlap_on_header", "does overlap help on top of the header?", "boundaries_header_overlap",
             "boundaries_header", "strategy"),
    Question("hybrid", "hybrid against dense?", "hybrid", "dense", "retriever"),
    *(Question(name, f"{name} against its first stage ({RETRIEVERS[name].inputs[0]})?", name,
               RETRIEVERS[name].inputs[0], "retriever") for name in RERANKERS),
)

SCHEMA = pa.schema([
    ("family", pa.string()), ("comparison", pa.string()), ("model", pa.string()), ("a_strategy", pa.string()),
    ("a_retriever", pa.string()), ("b_model", pa.string()), ("b_strategy", pa.string()), ("b_retriever", pa.string()),
    ("measure", pa.string()), ("needles", pa.int64()), ("a_value", pa.float64()), ("b_value", pa.float64()),
    ("wins", pa.int64()), ("losses", pa.int64()), ("ties", pa.int64()), ("p_value", pa.float64()),
    ("p_adjusted", pa.float64()), ("adjustment", pa.string()), ("test", pa.string()), ("result", pa.string()),
    ("margin", pa.float64()),
])
DIFFERENCE_FAMILIES = ("verdict", "question", "external")  # two-sided tests of a difference


def needle_values(connection: duckdb.DuckDBPyConnection, configuration: tuple[str, str, str], measure: str
                  ) -> dict[str, float]:
    """{needle: its mean over its phrasings} of one configuration's per-query column for ``measure``."""
    return dict(connection.execute(
        f"SELECT {UNIT} AS unit, avg({declared(measure).column}) FROM query_measures "
        "WHERE model = ? AND strategy = ? AND retriever = ? GROUP BY unit", list(configuration)).fetchall())


def paired_needles(connection: duckdb.DuckDBPyConnection, a: tuple[str, str, str], b: tuple[str, str, str],
                   measure: str) -> tuple[list[float], list[float]]:
    """The values of configurations a and b on the needles both answered, paired in needle order."""
    left, right = needle_values(connection, a, measure), needle_values(connection, b, measure)
    shared = sorted(set(left) & set(right))
    return [left[n] for n in shared], [right[n] for n in shared]


def comparison_row(family: str, label: str, a: tuple[str, str, str], b: tuple[str, str, str], measure: str,
             x: list[float], y: list[float], counted, p_value: float, test: str, margin: float | None = None) -> dict:
    """A row of ``comparisons`` (SCHEMA) for one test of a against b on the paired values x and y, before the
    family is adjusted; ``counted`` holds its wins, losses and ties."""
    return {"family": family, "comparison": label, "model": a[0], "a_strategy": a[1], "a_retriever": a[2],
            "b_model": b[0], "b_strategy": b[1], "b_retriever": b[2], "measure": measure, "needles": len(x),
            "a_value": sum(x) / len(x), "b_value": sum(y) / len(y), "wins": counted.wins, "losses": counted.losses,
            "ties": counted.ties, "p_value": p_value, "p_adjusted": None, "adjustment": None, "test": test,
            "result": None, "margin": margin}


def compare(connection: duckdb.DuckDBPyConnection, family: str, label: str, a: tuple[str, str, str],
            b: tuple[str, str, str], measure: str) -> dict | None:
    """The paired test of configuration a (model, strategy, retriever) against b over the needles both
    answered; None when they share none."""
    x, y = paired_needles(connection, a, b, measure)
    if not x:
        return None
    result = paired_test(declared(measure), x, y)
    return comparison_row(family, label, a, b, measure, x, y, result, result.p_value, result.test)


def compare_non_inferior(connection: duckdb.DuckDBPyConnection, candidate: tuple[str, str, str],
                         pick: tuple[str, str, str], measure: str, margin: float) -> dict | None:
    """The one-sided non-inferiority test of ``candidate`` against the pick over the needles both answered
    (``equivalence.non_inferiority``); wins and losses count the needles it does better and worse on."""
    x, y = paired_needles(connection, candidate, pick, measure)
    if not x:
        return None
    return comparison_row("non_inferiority", "cheaper vs pick", candidate, pick, measure, x, y, sign_test(x, y),
                    non_inferiority(x, y, margin), f"paired t on needles, one-sided, non-inferiority margin {margin:g}",
                    margin)


def sensitivity_between(connection: duckdb.DuckDBPyConnection, measure: str, alpha: float):
    """``sensitivity_of(a, b)`` for ``decision.complete_decision``: what the needles both configurations answered
    can tell about their difference (``power.sensitivity`` of their sign-test counts)."""
    def sensitivity_of(a: tuple[str, str, str], b: tuple[str, str, str]) -> Sensitivity:
        x, y = paired_needles(connection, a, b, measure)
        counted = sign_test(x, y)
        return sensitivity(counted.wins, counted.losses, len(x), alpha)

    return sensitivity_of


def question_pair(question: Question, pick: tuple[str, str, str]) -> tuple[tuple, tuple]:
    """The two configurations a question compares, around the pick."""
    model, strategy, retriever = pick
    if question.by == "strategy":
        return (model, question.a, retriever), (model, question.b, retriever)
    return (model, strategy, question.a), (model, strategy, question.b)


def compute_comparisons(connection: duckdb.DuckDBPyConnection, ranking: list[dict], rule: DecisionRule) -> pa.Table:
    """The family of one run around the pick of ``ranking`` (``decision.rank_configurations``), adjusted."""
    competing = [configuration_of(r) for r in ranking if r["rank"] is not None]
    rows: list[dict | None] = []
    if competing:
        pick, measure = competing[0], rule.measure
        rows += [compare(connection, "verdict", f"pick vs #{position}", pick, other, measure)
                 for position, other in enumerate(competing[1:], start=2)]
        present = set(connection.sql("SELECT DISTINCT model, strategy, retriever FROM query_measures").fetchall())
        for question in QUESTIONS:
            a, b = question_pair(question, pick)
            if a in present and b in present:
                rows.append(compare(connection, "question", question.key, a, b, measure))
        rows += [compare(connection, "external", f"{key} vs pick", (EXTERNAL_MODEL, key, key), pick, measure)
                 for key in sorted({c[1] for c in present if c[0] == EXTERNAL_MODEL})]
        rows_ranked = [r for r in ranking_rows(ranking, rule) if r["rank"] is not None]
        rows += [compare_non_inferior(connection, configuration_of(r), pick, measure, rule.margin)
                 for r in cheaper_than(rows_ranked[0], rows_ranked)]
    tested = [row for row in rows if row is not None]
    for row, adjusted in zip(tested, adjust([row["p_value"] for row in tested], rule.adjustment)):
        row |= {"p_adjusted": adjusted, "adjustment": rule.adjustment,
                "result": f"+{row['wins']}/-{row['losses']}, adjusted p = {adjusted:.2g} (raw {row['p_value']:.2g})"
                + (f", non-inferior within {row['margin']:g}" if row["margin"] is not None and adjusted < rule.alpha
                   else "")}
    return pa.Table.from_pylist(tested, schema=SCHEMA)


def write_comparisons(connection: duckdb.DuckDBPyConnection, ranking: list[dict], rule: DecisionRule) -> pa.Table:
    """Replace ``comparisons`` with the run's family, then complete the stored decision from it (its cheaper
    equivalent and what the needles can tell, ``decision.complete_decision``)."""
    table = compute_comparisons(connection, ranking, rule)
    connection.register("incoming_comparisons", table)
    connection.execute("CREATE OR REPLACE TABLE comparisons AS SELECT * FROM incoming_comparisons")
    connection.unregister("incoming_comparisons")
    complete_decision(connection, ranking, table.to_pylist(), rule,
                      sensitivity_between(connection, rule.measure, rule.alpha))
    return table


def adjustment_label(method: str) -> str:
    return METHODS.get(method, method)
