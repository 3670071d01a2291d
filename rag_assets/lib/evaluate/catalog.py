"""Every retrieval measure, declared once (as ir_measures declares its measures): its name, its per-query
value in SQL, how it is aggregated, its interval, its paired test and its label.

The views of ``measures.py`` (``query_measures``, ``metrics``, ``metrics_history``), the comparison
table's columns (``tables.py``), the paired comparisons (``comparisons.py``) and the regression alarm
(``regressions.py``) are all generated from ``MEASURES``: adding a measure is one entry here.

- ``per_query``: SQL over one row of ``retrieval_results`` (``hit_rank``, ``relevant_ranks``,
  ``relevant_total``, ``query_kind``), a miss counted as 0 (``coalesce``), never NULL: a mean over
  NULLs would drop the misses and inflate the figure.
- ``interval``: ``proportion`` (Wilson's score interval of ``sum(column)`` successes in ``slots`` x
  queries trials), ``mean`` (mean +- 1.96 standard errors, clipped to [0, 1]), or ``proportion_or_mean``
  (Wilson's while every query has one relevant item, else the mean's).
- ``paired_test``: ``sign`` for a 0/1 value per query, ``wilcoxon`` (signed-rank) for a graded one.

The unit of evidence is the needle (``UNIT``): its phrasings are one cluster, not independent trials. Every
figure is the mean over needles of the needle's mean over its phrasings, its interval counts needles, and a
paired test compares the needles' means (``measures.py``, ``comparisons.py``). A query without a needle (a
BEIR query) is its own unit. Grouped by phrasing, a needle has one query, and the figures are per phrasing.

success at a context budget (``budget_measure``): the needle's chunk is inside the context built as ``ask``
builds it, whole chunks in rank order until the first that does not fit (``lib/retrieve/context.py``); the
budgets are a setting (``evaluation.budgets``), so ``measures(budgets)`` is the list a run computes. The
costs (``COSTS``: context tokens, tokens to the needle) are means with an interval, never tested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

K_VALUES = (1, 4, 8, 20)
NDCG_DEPTH = 10
DEFAULT_BUDGETS = (256, 512, 1024, 2048, 4096)  # context tokens (lib/retrieve/context.py's tokenizer)
UNIT = "coalesce(needle_id, query_id)"  # the independent unit of evidence: a needle, whatever its phrasings


@dataclass(frozen=True)
class Measure:
    name: str  # its column in ``metrics`` (and ``<name>_low``, ``<name>_high``)
    label: str  # how a table heads it
    column: str  # its per-query column in ``query_measures``
    per_query: str  # SQL of that column over a row of ``retrieval_results``
    interval: Literal["proportion", "proportion_or_mean", "mean"]
    paired_test: Literal["sign", "wilcoxon"]
    slots: int = 1  # trials per query of a proportion (precision@k: k)
    shown: bool = False  # a column of the comparison table
    alarm: bool = False  # watched by the regression alarm
    history: bool = False  # kept per evaluation run (``metrics_history``)

    def mean(self, value: str | None = None) -> str:
        """SQL: the mean over queries of ``value`` (default: its per-query column)."""
        value = value or self.column
        return f"avg({value})" if self.slots == 1 else f"avg({value} / {self.slots})"

    def aggregate(self, value: str | None = None) -> str:
        """SQL: the mean and its interval as ``name, name_low, name_high``."""
        value = value or self.column
        trials = "count(*)" if self.slots == 1 else f"{self.slots} * count(*)"
        if self.interval == "proportion":
            low, high = f"wilson_low(sum({value}), {trials})", f"wilson_high(sum({value}), {trials})"
        elif self.interval == "mean":
            low, high = f"mean_low({value})", f"mean_high({value})"
        else:
            single = "bool_and(query_kind <> 'document')"
            low = f"CASE WHEN {single} THEN wilson_low(sum({value}), count(*)) ELSE mean_low({value}) END"
            high = f"CASE WHEN {single} THEN wilson_high(sum({value}), count(*)) ELSE mean_high({value}) END"
        return f"{self.mean(value)} AS {self.name}, {low} AS {self.name}_low, {high} AS {self.name}_high"


def _found(k: int) -> str:
    """SQL: the share of a query's relevant items in its top k (a needle query has one item, the needle)."""
    return (f"CASE WHEN query_kind = 'document' THEN len(list_filter(coalesce(relevant_ranks, []), lambda r: r <= {k}))"
            f" / greatest(relevant_total, 1) ELSE coalesce(hit_rank <= {k}, false)::INTEGER END")


_NDCG = (f"CASE WHEN coalesce(relevant_total, 0) = 0 THEN 0.0 ELSE coalesce(list_sum(list_transform(list_filter("
         f"relevant_ranks, lambda r: r <= {NDCG_DEPTH}), lambda r: 1.0 / log2(r + 1))), 0.0) / list_sum(list_transform("
         f"range(1, least(relevant_total, {NDCG_DEPTH}) + 1), lambda i: 1.0 / log2(i + 1))) END")

MEASURES: tuple[Measure, ...] = (
    *(Measure(f"success_at_{k}", f"S@{k}", f"hit_at_{k}", f"coalesce(hit_rank <= {k}, false)::INTEGER", "proportion",
              "sign", shown=True, alarm=True, history=k == 20) for k in K_VALUES),
    *(Measure(f"recall_at_{k}", f"R@{k}", f"found_at_{k}", _found(k), "proportion_or_mean", "wilcoxon",
              history=k == 20) for k in K_VALUES),
    *(Measure(f"precision_at_{k}", f"P@{k}", f"relevant_at_{k}",
              f"len(list_filter(coalesce(relevant_ranks, []), lambda r: r <= {k}))", "proportion", "wilcoxon",
              slots=k, shown=k == 4) for k in K_VALUES),
    Measure("mrr", "MRR", "reciprocal_rank", "coalesce(1.0 / hit_rank, 0.0)", "mean", "wilcoxon", shown=True,
            alarm=True, history=True),
    Measure(f"ndcg_at_{NDCG_DEPTH}", f"nDCG@{NDCG_DEPTH}", f"ndcg_at_{NDCG_DEPTH}", _NDCG, "mean", "wilcoxon",
            shown=True),
)


def budget_measure(budget: int) -> Measure:
    """success within ``budget`` context tokens: the needle's chunk among the whole chunks that fit. A row
    without token counts (an evaluation run recorded before they were) has no value, not a miss."""
    return Measure(f"success_at_{budget}_tokens", f"S@{budget}t", f"hit_in_{budget}_tokens",
                   f"CASE WHEN context_tokens IS NULL THEN NULL ELSE coalesce(hit_rank IS NOT NULL AND "
                   f"context_tokens[hit_rank] <= {budget}, false)::INTEGER END", "proportion", "sign", shown=True,
                   alarm=True, history=True)


def budgets_in(names) -> tuple[int, ...]:
    """The budgets whose success columns are among ``names`` (per query ``hit_in_<B>_tokens``, aggregated
    ``success_at_<B>_tokens``), sorted."""
    pattern = re.compile(r"(?:hit_in|success_at)_(\d+)_tokens")
    return tuple(sorted({int(found.group(1)) for name in names if (found := pattern.fullmatch(name))}))


def measures(budgets: tuple[int, ...] = DEFAULT_BUDGETS) -> tuple[Measure, ...]:
    """The measures an evaluation with these context budgets computes: ``MEASURES``, then success at each budget."""
    return (*MEASURES, *(budget_measure(budget) for budget in sorted(set(budgets))))


@dataclass(frozen=True)
class Cost:
    """What a configuration puts into a prompt, in context tokens: a mean over needles with the normal
    approximation's interval (not bounded by 1), never a paired test."""

    name: str  # its column in ``metrics`` (and ``<name>_low``, ``<name>_high``)
    label: str
    column: str  # its per-query column in ``query_measures``
    per_query: str  # NULL where it has no value (tokens to the needle of a miss): left out of the mean

    def aggregate(self) -> str:
        return (f"avg({self.column}) AS {self.name}, spread_low({self.column}) AS {self.name}_low, "
                f"spread_high({self.column}) AS {self.name}_high")


def costs(budgets: tuple[int, ...] = DEFAULT_BUDGETS) -> tuple[Cost, ...]:
    """The context each configuration costs: tokens up to and including the needle's chunk (over the needles
    it retrieved), the top k's tokens, and what a context of each budget holds (0 when the first chunk is
    larger than the budget)."""
    return (
        Cost("tokens_to_needle", "tokens to needle", "tokens_to_needle", "context_tokens[hit_rank]"),
        *(Cost(f"context_at_{k}", f"tokens@{k}", f"context_at_{k}",
               f"CASE WHEN context_tokens IS NULL THEN NULL ELSE coalesce(context_tokens[least({k}, "
               f"len(context_tokens))], 0) END") for k in K_VALUES),
        *(Cost(f"context_at_{budget}_tokens", f"context@{budget}t", f"context_in_{budget}_tokens",
               f"CASE WHEN context_tokens IS NULL THEN NULL ELSE coalesce(list_max(list_filter(context_tokens, "
               f"lambda t: t <= {budget})), 0) END") for budget in sorted(set(budgets))),
    )


# a timing, not a measure of the answer: no interval, never compared (over every query, not per needle)
TIMINGS = ("list_aggregate(flatten(list(latencies)), 'median') AS median_latency_ms",)


def measure(name: str, budgets: tuple[int, ...] = DEFAULT_BUDGETS) -> Measure:
    """The measure of that name (success at any budget, ``success_at_<B>_tokens``, included); ValueError
    listing the measures otherwise."""
    budget = re.fullmatch(r"success_at_(\d+)_tokens", name)
    if budget:
        return budget_measure(int(budget.group(1)))
    for declared in measures(budgets):
        if declared.name == name:
            return declared
    raise ValueError(f"unknown measure {name!r}; the measures are {', '.join(m.name for m in measures(budgets))}")
