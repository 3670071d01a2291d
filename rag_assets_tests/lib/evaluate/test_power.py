"""The power of the verdict's sign test (``power.py``), against a seeded simulation of the test itself:
needles drawn as wins, losses and ties, the project's own ``sign_test`` run on each draw."""

import numpy as np
import pytest
from scipy import stats

from rag_assets.lib.evaluate.paired_tests import sign_test
from rag_assets.lib.evaluate.power import (
    MAX_NEEDLES,
    critical_values,
    detectable_difference,
    needles_needed,
    power,
    sensitivity,
)


def simulated_power(n: int, psi: float, delta: float, draws: int, seed: int) -> tuple[float, float, float]:
    """The share of ``draws`` seeded evaluations of n needles whose sign test rejects at 0.05, with its 99 %
    Clopper-Pearson interval."""
    generator = np.random.default_rng(seed)
    rejected = 0
    for _ in range(draws):
        outcome = generator.choice(3, size=n, p=[(psi + delta) / 2, (psi - delta) / 2, 1 - psi])
        a = (outcome == 0).astype(float)  # a win: a finds the needle, b does not
        b = (outcome == 1).astype(float)
        rejected += sign_test(list(a), list(b)).p_value < 0.05
    interval = stats.binomtest(rejected, draws).proportion_ci(0.99, method="exact")
    return rejected / draws, interval.low, interval.high


def test_the_critical_region_is_scipys_two_sided_binomial_test():
    critical = critical_values(40, 0.05)
    for d in range(41):
        rejects = [w for w in range(d + 1) if stats.binomtest(w, d, 0.5).pvalue < 0.05] if d else []
        assert rejects == [w for w in range(d + 1) if w <= critical[d] or w >= d - critical[d]]


@pytest.mark.parametrize("n, psi, delta", [(40, 0.3, 0.2), (60, 0.15, 0.1), (25, 0.5, 0.3)])
def test_the_exact_power_lies_in_the_simulations_interval(n, psi, delta):
    share, low, high = simulated_power(n, psi, delta, draws=2000, seed=n)
    assert low <= power(n, psi, delta) <= high, (share, power(n, psi, delta))


def test_the_needles_needed_reach_80_percent_in_simulation_and_one_fewer_band_does_not():
    psi, delta = 0.2, 0.1
    needed = needles_needed(psi, delta)
    assert power(needed, psi, delta) >= 0.8 and power(needed - 1, psi, delta) < 0.8 or \
        all(power(m, psi, delta) >= 0.8 for m in range(needed, needed + 5))
    share, low, high = simulated_power(needed, psi, delta, draws=2000, seed=7)
    assert low <= 0.8 <= high or share > 0.8, share
    far_fewer, _, high_fewer = simulated_power(needed // 2, psi, delta, draws=1000, seed=8)
    assert high_fewer < 0.8


def test_the_detectable_difference_has_80_percent_power_and_a_smaller_one_does_not():
    n, psi = 60, 0.3
    found = detectable_difference(n, psi)
    assert power(n, psi, found) >= 0.8 > power(n, psi, found - 0.01)
    share, low, high = simulated_power(n, psi, found, draws=2000, seed=3)
    assert low <= power(n, psi, found) <= high


def test_what_cannot_be_detected_is_said_so():
    assert detectable_difference(60, 0.03) is None  # two discordant needles of 60 can never reject
    assert needles_needed(0.2, 0.0) is None and needles_needed(0.0, 0.0) is None
    assert needles_needed(1.0, 0.001) is None  # beyond MAX_NEEDLES
    assert needles_needed(0.5, 0.05) < MAX_NEEDLES
    with pytest.raises(ValueError):
        power(10, 0.1, 0.3)


def test_a_comparison_is_described_by_its_own_counts():
    said = sensitivity(wins=6, losses=2, needles=40)
    assert said.discordant_rate == 0.2 and said.observed_difference == 0.1
    assert said.needles_needed == needles_needed(0.2, 0.1) and said.detectable_difference == detectable_difference(40, 0.2)
    assert f"the observed 0.100 needs {said.needles_needed:,} needles" in said.describe()
    assert sensitivity(0, 0, 30).describe() == "the two agree on all 30 needles: no difference to detect"


def test_too_few_discordant_needles_to_detect_anything_is_said_so():
    # 2 discordant needles of 30: even both the same way (a difference of 2/30) is never significant at 0.05
    said = sensitivity(wins=1, losses=1, needles=30)
    assert said.detectable_difference is None
    assert said.describe().startswith("30 needles cannot detect at 80 % power even a difference of 0.067")
    assert "no difference was observed" in said.describe()
