import math

import numpy as np
import pytest

from rag_assets.lib.retrieve.bm25 import BM25, tokenize

DOCS = ["the kettle boils water", "descale the kettle with vinegar", "toast bread", "water water everywhere"]


def independent_bm25(query, docs, k1=1.2, b=0.75):
    """Okapi BM25 written out term by term, from the formula, with no shared code."""
    tokenized = [tokenize(d) for d in docs]
    n, avgdl = len(docs), sum(map(len, tokenized)) / len(docs)
    scores = []
    for doc in tokenized:
        score = 0.0
        for term in tokenize(query):
            df = sum(term in d for d in tokenized)
            if df == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = doc.count(term)
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(score)
    return scores


@pytest.mark.parametrize("query", ["kettle water", "the kettle the", "vinegar", "nothing matches", "Water!"])
def test_scores_match_an_independent_computation(query):
    np.testing.assert_allclose(BM25(DOCS).scores(query), independent_bm25(query, DOCS), rtol=1e-12, atol=1e-12)


def test_a_worked_example():
    # "vinegar" is in 1 of 4 docs: idf = ln(1 + (4 - 1 + 0.5) / 1.5) = ln(3.3333) = 1.2040;
    # doc 1 has 5 tokens, avgdl = (4 + 5 + 2 + 3) / 4 = 3.5, tf = 1:
    # 1.2040 * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 5 / 3.5)) = 2.6488 / 2.5857 = 1.0244
    indices, scores = BM25(DOCS).top_k("vinegar", 10)
    assert indices == [1]  # chunks scoring 0 are not returned
    assert scores[0] == pytest.approx(1.0244, abs=1e-4)


def test_ranks_and_ties_are_deterministic():
    indices, scores = BM25(["a b", "a b", "c"]).top_k("a", 5)
    assert indices == [0, 1] and scores[0] == scores[1]


def test_tokens_are_lower_cased_letters_and_digits():
    assert tokenize("Python 3.11's PEP-8, naïve_case") == ["python", "3", "11", "s", "pep", "8", "naïve", "case"]


def test_the_tokenizer_is_configurable_stop_words_and_snowball_stemming():
    from rag_assets.lib.retrieve.bm25 import BM25Config

    plain = BM25Config()
    assert plain.tokenize("The Studies of Running") == ["the", "studies", "of", "running"]
    english = BM25Config(stopwords="english", stemmer="english")
    assert english.tokenize("The Studies of Running") == ["studi", "run"]  # PyStemmer's Snowball
    assert BM25Config(lowercase=False).tokenize("Kettle") == ["Kettle"]
    # a stemmed query finds the inflected document; the plain one does not
    texts = ["clinical studies of vitamin d", "a kettle and its descaling"]
    assert BM25(texts, english).top_k("study", 2)[0] == [0]
    assert BM25(texts, plain).top_k("study", 2) == ([], [])
    with pytest.raises(ValueError, match="stop words 'french'"):
        BM25Config(stopwords="french")


def test_k1_and_b_are_the_configured_ones():
    from rag_assets.lib.retrieve.bm25 import BM25Config

    texts = ["kettle kettle kettle vinegar", "kettle", "toaster crumbs tray"]
    for k1, b in ((0.9, 0.4), (1.2, 0.75), (2.0, 0.0)):
        scores = BM25(texts, BM25Config(k1=k1, b=b)).scores("kettle")
        idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
        average = (4 + 1 + 3) / 3
        expected = [idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average)) for tf, length in ((3, 4), (1, 1))]
        assert list(scores[:2]) == pytest.approx(expected) and scores[2] == 0
