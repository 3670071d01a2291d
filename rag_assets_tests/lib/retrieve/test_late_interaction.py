import numpy as np
import pytest

from rag_assets.lib.retrieve.late_interaction import maxsim


def test_maxsim_averages_each_query_tokens_best_match():
    query = np.array([[1, 0], [0, 1]], dtype=np.float32)
    chunk = np.array([[1, 0], [1, 1]], dtype=np.float32)
    # query token (1,0): best cos 1 (chunk token 1); (0,1): best cos 0.7071 (chunk token 2) -> mean 0.8536
    assert maxsim(query, chunk) == pytest.approx((1 + 2 ** -0.5) / 2)
    assert maxsim(query, np.zeros((0, 2))) == 0.0


class CountingTokens:
    """Wraps an embedder and counts the texts whose token vectors it is asked to compute."""

    def __init__(self, embedder):
        self.embedder, self.asked = embedder, []

    def token_vectors(self, texts):
        self.asked += list(texts)
        return self.embedder.token_vectors(texts)


@pytest.mark.integration
def test_token_vectors_are_stored_once_and_read_back_by_another_process_with_the_same_scores(tmp_path):
    from rag_assets.lib.embed.cache import TokenVectorCache
    from rag_assets.lib.embed.models import load_model
    from rag_assets.lib.retrieve.late_interaction import TokenVectors

    texts = ["Lists are mutable sequences.", "Tuples are immutable.", "A dict maps keys to values.", "x"]
    query = load_model("paraphrase-MiniLM-L3-v2").token_vectors(["Which sequences are mutable?"])[0]
    cache = TokenVectorCache(tmp_path / "tokens", 384)
    first = CountingTokens(load_model("paraphrase-MiniLM-L3-v2"))
    computed = TokenVectors(first, texts, cache)
    fresh = computed.get([2, 0, 2])
    assert first.asked == [texts[2], texts[0]] and all(t.dtype == np.float16 for t in fresh)
    assert computed.save() == 2 and computed.save() == 0  # nothing computed since
    assert cache.size_bytes() > 2 * 5 * 384 * 2  # at least their float16 bytes (two texts, >= 5 tokens each)

    # another process: a new model instance with no token memory computes only what was never stored
    second = CountingTokens(load_model("paraphrase-MiniLM-L3-v2"))
    reread = TokenVectors(second, texts, cache)
    again = reread.get([0, 1, 2])
    assert second.asked == [texts[1]] and reread.reused == 2
    for stored, kept in zip(again, [fresh[1], None, fresh[0]]):
        if kept is not None:
            np.testing.assert_array_equal(stored, kept)
    # a score does not depend on whether the vectors were computed now or read back
    assert [maxsim(query, t) for t in again[::2]] == [maxsim(query, t) for t in (fresh[1], fresh[0])]
    assert reread.save() == 1 and TokenVectors(second, texts, cache).get([3]) and second.asked[-1] == "x"
