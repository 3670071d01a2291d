import pytest

from rag_assets.lib.evaluate.paired_tests import sign_test, wilcoxon_test


def test_sign_test_on_discordant_pairs():
    # 18 wins, 3 losses, 9 ties: p = 2 * P(Binomial(21, 1/2) <= 3) = 2 * (1 + 21 + 210 + 1330) / 2^21 = 0.001490
    a = [1] * 18 + [0] * 3 + [1] * 5 + [0] * 4
    b = [0] * 18 + [1] * 3 + [1] * 5 + [0] * 4
    result = sign_test(a, b)
    assert (result.wins, result.losses, result.ties) == (18, 3, 9)
    assert result.p_value == pytest.approx(2 * (1 + 21 + 210 + 1330) / 2 ** 21)
    assert result.label() == "+18/-3, p = 0.0015"


def test_no_discordant_pair_means_no_evidence():
    assert sign_test([1, 0, 1], [1, 0, 1]).p_value == 1.0
    assert wilcoxon_test([0.5, 1.0], [0.5, 1.0]).p_value == 1.0


def test_wilcoxon_on_reciprocal_ranks():
    a = [1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.333, 1.0]
    b = [0.5, 0.333, 0.25, 0.5, 0.2, 0.5, 0.25, 0.1]  # a higher everywhere: exact p = 2 / 2^8
    result = wilcoxon_test(a, b)
    assert (result.wins, result.losses) == (8, 0)
    assert result.p_value == pytest.approx(2 / 2 ** 8)
    with pytest.raises(ValueError):
        sign_test([1], [1, 0])


def test_each_test_names_itself_and_refuses_unpaired_outcomes_saying_why():
    assert sign_test([1, 0], [0, 0]).test == "sign test (exact, two-sided)"
    assert wilcoxon_test([1.0, 0.5], [0.5, 0.5]).test == "Wilcoxon signed-rank (two-sided)"
    with pytest.raises(ValueError, match="^paired outcomes need the same queries$"):
        sign_test([1], [1, 0])
    with pytest.raises(ValueError, match="^paired values need the same queries$"):
        wilcoxon_test([1.0], [1.0, 0.5])


def test_wilcoxon_counts_ties_and_tests_balanced_wins_and_losses_by_their_sizes():
    """Two wins by much and two losses by little: wins == losses, but the ranks are not balanced."""
    from scipy import stats

    a = [1.0, 1.0, 0.5, 0.45, 0.2]
    b = [0.0, 0.1, 0.6, 0.5, 0.2]  # differences +1.0 (a whole reciprocal rank), +0.9, -0.1, -0.05, 0
    result = wilcoxon_test(a, b)
    assert (result.wins, result.losses, result.ties) == (2, 2, 1)
    expected = stats.wilcoxon([1.0, 0.9, -0.1, -0.05]).pvalue  # the zero difference dropped, the 1.0 kept
    assert result.p_value == pytest.approx(expected) and result.p_value < 1.0
