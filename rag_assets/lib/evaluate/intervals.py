"""95 % intervals, in one place for Python and for DuckDB.

- Wilson's score interval for a proportion ``x / n`` (``wilson_interval``; the SQL macros
  ``wilson_low`` and ``wilson_high``): success@k, recall@k of one relevant item, precision@k over
  the k x queries slots, and the refusal shares.
- The normal approximation for a mean of per-query values in [0, 1] (``mean_low``, ``mean_high``):
  mean +- 1.96 standard errors, clipped to [0, 1]; MRR, nDCG@10, recall@k over several relevant
  items.
- The same for a mean of non-negative values without an upper bound (``spread_low``, ``spread_high``):
  context tokens.

The SQL macros are generated from the same constant and tested equal to the Python function
(``rag_assets_tests/lib/evaluate/test_intervals.py``).
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion successes / n."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


# n is taken as DOUBLE: an INTEGER n (a bound parameter, say) would overflow in 4 * n * n past n = 23,170
def sql_macros() -> str:
    """SQL: the macros ``wilson_low``, ``wilson_high``, ``mean_low``, ``mean_high``, ``spread_low`` and
    ``spread_high``."""
    return f"""
CREATE OR REPLACE MACRO wilson_low(x, n) AS
    greatest(0.0, ((x / n::DOUBLE + {Z95}^2 / (2 * n::DOUBLE)) - {Z95} * sqrt((x / n::DOUBLE) * (1 - x / n::DOUBLE)
    / n::DOUBLE + {Z95}^2 / (4 * n::DOUBLE * n::DOUBLE))) / (1 + {Z95}^2 / n::DOUBLE));
CREATE OR REPLACE MACRO wilson_high(x, n) AS
    least(1.0, ((x / n::DOUBLE + {Z95}^2 / (2 * n::DOUBLE)) + {Z95} * sqrt((x / n::DOUBLE) * (1 - x / n::DOUBLE)
    / n::DOUBLE + {Z95}^2 / (4 * n::DOUBLE * n::DOUBLE))) / (1 + {Z95}^2 / n::DOUBLE));
CREATE OR REPLACE MACRO mean_low(v) AS greatest(0.0, avg(v) - {Z95} * coalesce(stddev_samp(v), 0) / sqrt(count(v)));
CREATE OR REPLACE MACRO mean_high(v) AS least(1.0, avg(v) + {Z95} * coalesce(stddev_samp(v), 0) / sqrt(count(v)));
CREATE OR REPLACE MACRO spread_low(v) AS greatest(0.0, avg(v) - {Z95} * coalesce(stddev_samp(v), 0) / sqrt(count(v)));
CREATE OR REPLACE MACRO spread_high(v) AS avg(v) + {Z95} * coalesce(stddev_samp(v), 0) / sqrt(count(v));
"""
