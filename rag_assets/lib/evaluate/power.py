"""How many needles a difference needs: the power of the paired sign test the verdict reads (``paired_tests.py``).

The model is the test's own: each needle, independently, is a win for configuration a (its value higher under
a), a loss, or a tie, with probabilities ``(psi + delta) / 2``, ``(psi - delta) / 2`` and ``1 - psi``.
``psi`` is the rate of discordant needles and ``delta`` the difference (wins minus losses, per needle: with
one phrasing a needle, the difference in success). Given ``n`` needles, the number ``D`` of discordant ones
is Binomial(n, psi), and given D the wins are Binomial(D, pi) with ``pi = (1 + delta / psi) / 2``; the exact
two-sided sign test at level alpha rejects when the wins fall in its critical region for D. The power is
computed exactly from those two binomials (no normal approximation: the test is discrete, and with the
tens of needles an evaluation holds the approximation is off by several points), and checked against a
seeded simulation of the same test in the tests.

- ``detectable_difference(n, psi)``: the smallest delta whose power reaches ``POWER`` (80 %) with n needles
  at the observed rate of discordant needles; None when even ``delta = psi`` (every discordant needle a
  win) does not.
- ``needles_needed(psi, delta)``: the fewest needles with which the observed difference reaches that power
  (the smallest n from which it stays there: the exact test's power saws with n); None when there is no
  difference to detect, or above ``MAX_NEEDLES``.

The level is the nominal alpha of one planned test: read in a family adjusted by Holm, the first test
faces alpha / m, so the figures are a lower bound on what the family needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

POWER = 0.8
MAX_NEEDLES = 100_000


def _critical(counts: np.ndarray, alpha: float) -> np.ndarray:
    """For each number of discordant needles D, the largest c with 2 P(wins <= c) < alpha under
    Binomial(D, 1/2), -1 where no outcome rejects: the exact two-sided test (its p-value, for p = 1/2, is
    2 P(wins <= min(wins, D - wins)), as scipy's binomtest gives, read as significant below alpha) rejects
    wins <= c or wins >= D - c."""
    counts = np.asarray(counts)
    c = np.maximum(stats.binom.ppf(alpha / 2, counts, 0.5).astype(np.int64) - 1, -1)
    for _ in range(4):  # floating point at the edge of the region: a step either way settles it
        up = (c + 1 < counts / 2) & (2 * stats.binom.cdf(c + 1, counts, 0.5) < alpha)
        c = np.where(up, c + 1, c)
        down = (c >= 0) & ((2 * stats.binom.cdf(c, counts, 0.5) >= alpha) | (c >= counts / 2))
        c = np.where(down, c - 1, c)
    return np.where(counts > 0, c, -1)


_CRITICAL: dict[float, np.ndarray] = {}


def critical_values(n: int, alpha: float) -> np.ndarray:
    """``_critical`` for D = 0..n, kept per alpha (it only grows)."""
    known = _CRITICAL.get(alpha)
    if known is None or len(known) <= n:
        size = max(n + 1, 2 * len(known) if known is not None else 64)
        known = _critical(np.arange(size), alpha)
        _CRITICAL[alpha] = known
    return known[: n + 1]


def power(n: int, psi: float, delta: float, alpha: float = 0.05) -> float:
    """The chance that the exact two-sided sign test at ``alpha`` over ``n`` needles rejects, when needles are
    discordant at rate ``psi`` and the difference is ``delta`` (0 <= |delta| <= psi <= 1)."""
    if n <= 0 or psi <= 0:
        return 0.0
    if not 0 <= abs(delta) <= psi + 1e-12 or psi > 1 + 1e-12:
        raise ValueError(f"a difference of {delta} cannot come from {psi} discordant needles a needle")
    psi, delta = min(psi, 1.0), max(-psi, min(psi, delta))
    pi = 0.5 * (1 + delta / psi)
    counts = np.arange(n + 1)
    critical = critical_values(n, alpha)
    rejects = stats.binom.cdf(critical, counts, pi) + stats.binom.sf(counts - critical - 1, counts, pi)
    rejects = np.where(critical >= 0, rejects, 0.0)
    return float(np.sum(stats.binom.pmf(counts, n, psi) * rejects))


def detectable_difference(n: int, psi: float, alpha: float = 0.05, target: float = POWER) -> float | None:
    """The smallest difference detectable at ``target`` power with ``n`` needles discordant at rate ``psi``."""
    if n <= 0 or psi <= 0 or power(n, psi, psi, alpha) < target:
        return None
    low, high = 0.0, psi
    for _ in range(40):
        middle = (low + high) / 2
        if power(n, psi, middle, alpha) >= target:
            high = middle
        else:
            low = middle
    return high


def needles_needed(psi: float, delta: float, alpha: float = 0.05, target: float = POWER) -> int | None:
    """The fewest needles from which the difference ``delta`` at discordance ``psi`` keeps ``target`` power."""
    delta = abs(delta)
    if delta <= 0 or psi <= 0:
        return None
    # the normal approximation (Connor 1987) as a starting point, then the exact power around it
    z_a, z_b = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(target)
    guess = ((z_a * math.sqrt(psi) + z_b * math.sqrt(max(psi - delta * delta, 0.0))) / delta) ** 2
    if guess > 4 * MAX_NEEDLES:
        return None
    high = max(2, int(guess))
    while power(high, psi, delta, alpha) < target:
        high *= 2
        if high > 2 * MAX_NEEDLES:
            return None
    low = 1
    while low < high:  # the smallest n with power >= target
        middle = (low + high) // 2
        if power(middle, psi, delta, alpha) >= target:
            high = middle
        else:
            low = middle + 1
    while any(power(m, psi, delta, alpha) < target for m in range(low + 1, low + 6)):  # where it stays
        low += 1
    return low if low <= MAX_NEEDLES else None


@dataclass(frozen=True)
class Sensitivity:
    """What the needles of one paired comparison can tell: its counts, the smallest difference they detect at
    80 % power, and the needles the observed difference would need."""

    needles: int
    wins: int
    losses: int
    discordant_rate: float
    observed_difference: float
    detectable_difference: float | None
    needles_needed: int | None
    alpha: float

    def describe(self) -> str:
        if self.discordant_rate == 0:
            return f"the two agree on all {self.needles} needles: no difference to detect"
        detectable = (f"{self.needles} needles detect a difference of {self.detectable_difference:.3f} at 80 % power"
                      if self.detectable_difference is not None else
                      f"{self.needles} needles cannot detect at 80 % power even a difference of "
                      f"{self.discordant_rate:.3f} (every discordant needle the same way)")
        needed = ("no difference was observed" if self.observed_difference == 0 else
                  f"the observed {abs(self.observed_difference):.3f} needs "
                  + (f"{self.needles_needed:,} needles" if self.needles_needed is not None
                     else f"more than {MAX_NEEDLES:,} needles"))
        return (f"{detectable} ({self.discordant_rate:.0%} of needles discordant, two-sided sign test at "
                f"alpha {self.alpha:g}); {needed}")


def sensitivity(wins: int, losses: int, needles: int, alpha: float = 0.05) -> Sensitivity:
    """``Sensitivity`` of a comparison with ``wins`` and ``losses`` over ``needles`` shared needles."""
    psi = (wins + losses) / needles if needles else 0.0
    delta = (wins - losses) / needles if needles else 0.0
    return Sensitivity(needles, wins, losses, psi, delta, detectable_difference(needles, psi, alpha),
                       needles_needed(psi, delta, alpha), alpha)
