import numpy as np

from rag_assets.lib.embed.vectors import (
    distance_identity_gap,
    l2_normalize,
    norm_deviation,
)


def test_unit_vectors_satisfy_the_identity():
    vectors = l2_normalize(np.random.default_rng(1).normal(size=(300, 16)))
    assert norm_deviation(vectors) < 1e-6
    assert distance_identity_gap(vectors) < 1e-5


def test_a_vector_that_is_not_unit_length_is_caught():
    vectors = l2_normalize(np.random.default_rng(2).normal(size=(10, 4)))
    vectors[3] *= 1.01
    assert 0.009 < norm_deviation(vectors) < 0.011
    # with a non-unit row, ||a-b||^2/2 no longer equals 1 - cos for pairs that involve it
    assert distance_identity_gap(vectors, pairs=10) > 1e-3
