import pytest

from rag_assets.lib.retrieve.fusion import reciprocal_rank_fusion


def test_rrf_against_a_hand_computed_example():
    dense = [10, 20, 30]
    bm25 = [30, 40, 10]
    # 10: 1/61 + 1/63 = 0.032266;  30: 1/63 + 1/61 = 0.032266 (tie: 10 seen first);
    # 20: 1/62 = 0.016129;  40: 1/62 = 0.016129 (tie: 20 seen first)
    items, scores = reciprocal_rank_fusion([dense, bm25], k=4)
    assert items == [10, 30, 20, 40]
    assert scores == pytest.approx([1 / 61 + 1 / 63, 1 / 63 + 1 / 61, 1 / 62, 1 / 62])


def test_rrf_truncates_to_k_and_ignores_scores():
    items, _ = reciprocal_rank_fusion([[1, 2, 3], [3, 2, 1]], k=1)
    # 1: 1/61 + 1/63, 2: 2/62, 3: 1/63 + 1/61 -> 2/62 = 0.032258 < 0.032266: item 1 (first seen) wins
    assert items == [1]
