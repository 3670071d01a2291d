"""Paired tests between two configurations that answered the same needles.

The pairs are needles (``catalog.UNIT``), each value a needle's mean over its phrasings: the phrasings of
one needle are one cluster, and a test that counted them as independent pairs would be too sure of itself
(duplicating every query would halve its p-values).

- For a proportion at k (success@k, success at a budget), the exact two-sided sign test on the discordant
  needles: those whose mean is higher under one configuration than under the other (with one phrasing:
  answered by one and not the other). Under the null hypothesis each discordant needle is a win with
  probability 1/2, so p = P(|Binomial(n, 1/2) - n/2| >= |wins - n/2|), n = wins + losses. Needles on which
  both agree carry no information about the difference.
- For MRR, the Wilcoxon signed-rank test (two-sided, zero differences dropped) on the per-query
  reciprocal ranks, a miss counting as 0; wins and losses count the queries whose reciprocal rank
  went up or down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from scipy import stats


@dataclass(frozen=True)
class PairedResult:
    wins: int
    losses: int
    ties: int
    p_value: float
    test: str

    def label(self) -> str:
        return f"+{self.wins}/-{self.losses}, p = {self.p_value:.2g}"


def sign_test(a: Sequence[float], b: Sequence[float]) -> PairedResult:
    """Exact two-sided sign test on paired outcomes (0/1, or a needle's share of phrasings answered; a and b
    in the same order): a win where a is higher, a loss where b is."""
    if len(a) != len(b):
        raise ValueError("paired outcomes need the same queries")
    wins = sum(1 for x, y in zip(a, b) if x > y)
    losses = sum(1 for x, y in zip(a, b) if y > x)
    n = wins + losses
    p = 1.0 if n == 0 else float(stats.binomtest(wins, n, 0.5, alternative="two-sided").pvalue)
    return PairedResult(wins, losses, len(a) - n, p, "sign test (exact, two-sided)")


def wilcoxon_test(a: Sequence[float], b: Sequence[float]) -> PairedResult:
    """Wilcoxon signed-rank test on paired values (a and b in the same query order)."""
    if len(a) != len(b):
        raise ValueError("paired values need the same queries")
    differences = [x - y for x, y in zip(a, b)]
    wins = sum(1 for d in differences if d > 0)
    losses = sum(1 for d in differences if d < 0)
    if wins + losses == 0:
        p = 1.0
    else:
        p = float(stats.wilcoxon([d for d in differences if d != 0], alternative="two-sided").pvalue)
    return PairedResult(wins, losses, len(a) - wins - losses, p, "Wilcoxon signed-rank (two-sided)")


def paired_test(measure, a: Sequence[float], b: Sequence[float]) -> PairedResult:
    """The paired test a measure declares (``catalog.Measure.paired_test``) of ``a`` against ``b``."""
    return {"sign": sign_test, "wilcoxon": wilcoxon_test}[measure.paired_test](a, b)
