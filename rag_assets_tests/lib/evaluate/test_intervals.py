"""The intervals are defined once (rag_assets/lib/evaluate/intervals.py): the SQL macros equal the Python
function, and both equal hand-computed bounds."""

import math
import statistics

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.lib.evaluate.intervals import Z95, sql_macros, wilson_interval


@pytest.fixture(scope="module")
def connection():
    with duckdb.connect() as connection:
        connection.execute(sql_macros())
        yield connection


def test_wilson_by_hand():
    # 7 of 20: p = 0.35, z^2 = 3.8415; centre = (0.35 + 0.09604) / 1.19207 = 0.37418;
    # half = 1.96 * sqrt(0.011375 + 0.0024009) / 1.19207 = 0.19298
    low, high = wilson_interval(7, 20)
    assert low == pytest.approx(0.18120, abs=5e-5) and high == pytest.approx(0.56716, abs=5e-5)
    assert wilson_interval(0, 0) == (0.0, 1.0)  # no queries: nothing is known


@settings(max_examples=300, deadline=None)
@given(n=st.integers(min_value=1, max_value=100_000), share=st.floats(min_value=0, max_value=1))
def test_the_sql_macros_are_the_python_interval(connection, n, share):
    successes = math.floor(share * n)
    low, high = connection.execute("SELECT wilson_low(?::DOUBLE, ?), wilson_high(?::DOUBLE, ?)",
                                   [successes, n, successes, n]).fetchone()
    assert (low, high) == pytest.approx(wilson_interval(successes, n), abs=1e-12)


def test_the_mean_interval_is_the_normal_approximation(connection):
    values = [1.0, 0.5, 0.0, 0.25, 1 / 3]
    mean = statistics.fmean(values)
    half = Z95 * statistics.stdev(values) / math.sqrt(len(values))
    low, high = connection.execute("SELECT mean_low(v), mean_high(v) FROM (SELECT unnest(?) AS v)", [values]).fetchone()
    assert (low, high) == pytest.approx((mean - half, mean + half), abs=1e-12)
    assert mean - half > 0 and mean + half < 1  # not clipped: the formula itself is checked


def test_an_interval_never_leaves_zero_to_one_by_rounding():
    """All answered of 16 computes a high end a rounding error above 1 (1.0000000000000002); none of 21, a
    low end a rounding error below 0: both are held to the interval a proportion lives in."""
    assert wilson_interval(16, 16)[1] == 1.0
    assert wilson_interval(0, 21)[0] == 0.0
