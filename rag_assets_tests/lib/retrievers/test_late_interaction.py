import numpy as np
import pytest

from rag_assets.lib.retrievers.late_interaction import maxsim


def test_maxsim_averages_each_query_tokens_best_match():
    query = np.array([[1, 0], [0, 1]], dtype=np.float32)
    chunk = np.array([[1, 0], [1, 1]], dtype=np.float32)
    # query token (1,0): best cos 1 (chunk token 1); (0,1): best cos 0.7071 (chunk token 2) -> mean 0.8536
    assert maxsim(query, chunk) == pytest.approx((1 + 2 ** -0.5) / 2)
    assert maxsim(query, np.zeros((0, 2))) == 0.0
