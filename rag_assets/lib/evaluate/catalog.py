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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

K_VALUES = (1, 4, 8, 20)
NDCG_DEPTH = 10


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
# a timing, not a measure of the answer: no interval, never compared
TIMINGS = ("median(latency_ms) AS median_latency_ms",)


def measure(name: str) -> Measure:
    """The measure of that name; ValueError listing the measures otherwise."""
    for declared in MEASURES:
        if declared.name == name:
            return declared
    raise ValueError(f"unknown measure {name!r}; the measures are {', '.join(m.name for m in MEASURES)}")
