"""What a configuration costs, and whether a cheaper one is as good as the pick.

Cost (``cost_key``), in the order a team pays it: the median latency of a query (the whole pipeline's,
measured in the run), then the context tokens a question sends at the budget, then exact before approximate
search (an approximate index can lose a needle the exact one finds on a corpus it was not measured on), then
the tokens embedded to build the index. The decision orders configurations that are equal on the rule's
measures by it (never by name), and names the cheapest configuration that is non-inferior to the pick.

Non-inferiority (``non_inferiority``): configuration c is non-inferior to the pick within a margin m when the
one-sided test of H0: mean(c - pick) <= -m against H1: mean(c - pick) > -m rejects. The pairs are needles
(each a mean over its phrasings, as every paired test here), and the test is the paired t-test on their
differences: a needle's mean over phrasings is a fraction, so a test for binary pairs (Tango's score test)
does not apply, and with the 30 or more needles an evaluation holds the mean difference is near normal. When
every needle's difference is the same (two configurations that agree on every needle), the test has no spread
to estimate: p is 0 when that difference exceeds -m, else 1.

Why: model selection's habit is the one-standard-error rule (among models within one standard error of the
best, take the simplest), and regulatory statistics' is the non-inferiority trial (a cheaper treatment is
accepted when it is shown to be no worse than the standard by more than a margin fixed in advance). Both say
that a winner by a hair is no reason to pay more; the second says it with a test and a margin a team sets
(``decision.margin``, 0.05 of success at the budget by default), which the figures here can be read against.
"""

from __future__ import annotations

import math
from typing import Sequence

from scipy import stats

from rag_assets.lib.retrieve.engine import RETRIEVERS

MARGIN = 0.05


def approximate(retriever: str) -> bool:
    """Whether the retriever's ranking goes through an approximate search (it, or a retriever it builds on).
    Unknown names (a team's own) count as exact."""
    found = RETRIEVERS.get(retriever)
    if found is None:
        return False
    return bool(getattr(found, "approximate", False)) or any(approximate(upstream) for upstream in found.inputs)


def cost_key(row: dict) -> tuple[float, float, bool, float]:
    """(median latency ms, context tokens, approximate, tokens embedded) of a ranking row; unknown as most."""
    def known(value) -> float:
        return math.inf if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)

    return (known(row.get("median_latency_ms")), known(row.get("context_tokens")), approximate(row["retriever"]),
            known(row.get("tokens_embedded")))


COST_TERMS = ("latency", "context tokens", "exact search", "index cost")


def tie_break(pick: dict, other: dict) -> str:
    """Which cost term set ``pick`` before ``other`` (rows equal on the rule's measures): the first that
    differs, with both values; "name" when every cost is the same."""
    a, b = cost_key(pick), cost_key(other)
    if a[0] != b[0]:
        return f"lower latency ({a[0]:.2f} vs {b[0]:.2f} ms median per query)"
    if a[1] != b[1]:
        return f"a smaller context ({a[1]:.0f} vs {b[1]:.0f} tokens a question)"
    if a[2] != b[2]:
        return f"exact search ({pick['retriever']} is exact, {other['retriever']} approximate)"
    if a[3] != b[3]:
        return f"a cheaper index ({a[3]:,.0f} vs {b[3]:,.0f} tokens embedded)"
    return "its name (every cost is the same)"


def non_inferiority(candidate: Sequence[float], pick: Sequence[float], margin: float = MARGIN) -> float:
    """The one-sided p-value of H0: mean(candidate - pick) <= -margin over paired needle values."""
    if len(candidate) != len(pick):
        raise ValueError("paired values need the same needles")
    if not candidate:
        return 1.0
    differences = [c - p for c, p in zip(candidate, pick)]
    n = len(differences)
    mean = sum(differences) / n
    spread = math.sqrt(sum((d - mean) ** 2 for d in differences) / (n - 1)) if n > 1 else 0.0
    if spread <= 1e-12:
        return 0.0 if mean > -margin else 1.0
    t = (mean + margin) / (spread / math.sqrt(n))
    return float(stats.t.sf(t, n - 1))


def cost_ratio(candidate: dict, pick: dict) -> float | None:
    """The candidate's median latency over the pick's (None without both)."""
    a, b = candidate.get("median_latency_ms"), pick.get("median_latency_ms")
    return a / b if a is not None and b else None
