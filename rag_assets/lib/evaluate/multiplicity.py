"""p-values of a family of tests adjusted for multiplicity.

Every paired test of one evaluation run is one family: with a hundred tests at p < 0.05, about five are
"significant" when nothing differs. The adjusted p-value of a test is the smallest family-wide level at
which it would be rejected, so "significant" means adjusted p < alpha.

- ``holm`` (the default): Holm's step-down adjustment, which controls the family-wise error rate (the
  chance of any false finding) under any dependence between the tests, and is uniformly more powerful
  than Bonferroni's. The tests of one run share their queries, so an adjustment that needs independence
  or positive dependence would be a claim the data cannot back.
- ``bh``: Benjamini and Hochberg's step-up adjustment, which controls the false discovery rate (the
  expected share of false findings among those called significant) under independence or positive
  regression dependence; more findings, a weaker promise.

A p-value that is None (no test: no shared query) takes no part and stays None.
"""

from __future__ import annotations

from typing import Sequence

METHODS = {"holm": "Holm (family-wise error rate)", "bh": "Benjamini-Hochberg (false discovery rate)"}


def adjust(p_values: Sequence[float | None], method: str = "holm") -> list[float | None]:
    """The adjusted p-values, in the order given."""
    if method not in METHODS:
        raise ValueError(f"unknown adjustment {method!r}; choose one of {', '.join(METHODS)}")
    tested = [(p, position) for position, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    m = len(tested)
    if method == "holm":  # ascending: p_(i) * (m - i + 1), made non-decreasing
        running = 0.0
        for rank, (p, position) in enumerate(sorted(tested)):
            running = max(running, min(1.0, (m - rank) * p))
            adjusted[position] = running
    else:  # descending: p_(i) * m / i, made non-increasing
        running = 1.0
        for rank, (p, position) in reversed(list(enumerate(sorted(tested), start=1))):
            running = min(running, min(1.0, p * m / rank))
            adjusted[position] = running
    return adjusted
