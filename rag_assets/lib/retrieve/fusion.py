"""Reciprocal rank fusion: ranks, not scores, so there is nothing to calibrate.

    rrf(d) = sum over lists L holding d of 1 / (60 + rank_L(d))

with ranks from 1. A chunk missing from a list gets nothing from it. Ties break by the order of
first appearance (dense list first).
"""

from __future__ import annotations

from typing import Sequence

RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k: int, constant: int = RRF_K) -> tuple[list[int], list[float]]:
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (constant + rank)
    order = sorted(scores, key=lambda item: -scores[item])  # stable: first appearance wins ties
    best = order[:k]
    return best, [scores[item] for item in best]
