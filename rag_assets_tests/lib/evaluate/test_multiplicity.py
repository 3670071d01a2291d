import random

import pytest
from statsmodels.stats.multitest import multipletests

from rag_assets.lib.evaluate.multiplicity import adjust


def test_holm_by_hand():
    # sorted 0.01, 0.02, 0.03, 0.04 of m = 4: 0.04, 0.06, 0.06 (kept non-decreasing), 0.06; given out of order
    assert adjust([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    # a large p is capped at 1, and the order of the inputs is kept
    assert adjust([0.5, 0.001]) == pytest.approx([0.5, 0.002])
    assert adjust([0.6, 0.7]) == pytest.approx([1.0, 1.0])


def test_benjamini_hochberg_by_hand():
    # sorted 0.01, 0.02, 0.03, 0.04 of m = 4: each p * 4 / rank = 0.04, 0.04, 0.04, 0.04
    assert adjust([0.03, 0.01, 0.04, 0.02], "bh") == pytest.approx([0.04, 0.04, 0.04, 0.04])
    # 0.01 * 3 / 1 = 0.03, 0.04 * 3 / 2 = 0.06, 0.05 * 3 / 3 = 0.05: the second is lowered to 0.05
    assert adjust([0.05, 0.04, 0.01], "bh") == pytest.approx([0.05, 0.05, 0.03])


def test_a_missing_test_takes_no_part_and_an_unknown_method_is_refused():
    assert adjust([None, 0.01, None, 0.02]) == [None, pytest.approx(0.02), None, pytest.approx(0.02)]
    assert adjust([]) == []
    with pytest.raises(ValueError, match="unknown adjustment 'bonferroni'; choose one of holm, bh"):
        adjust([0.1], "bonferroni")


@pytest.mark.parametrize("seed", range(40))
def test_both_agree_with_statsmodels_on_random_families(seed):
    generator = random.Random(seed)
    size = generator.randint(1, 120)
    p_values = [generator.choice([generator.random(), generator.random() ** 6, 1.0, 0.05]) for _ in range(size)]
    for method, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        expected = multipletests(p_values, method=theirs)[1]
        assert adjust(p_values, method) == pytest.approx(list(expected), abs=1e-12)
