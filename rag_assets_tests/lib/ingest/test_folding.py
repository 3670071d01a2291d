"""Needles typed from the sources against the text a documentation tool rendered: the one fold every match
uses, its offsets back into the original, and the checks, judging, mining and location that use it."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_assets.lib.evalsets.checks import heading_problems, occurrence_problems
from rag_assets.lib.evalsets.judging import holds_needle
from rag_assets.lib.evalsets.mining import candidates, review
from rag_assets.lib.evalsets.queries import Needle
from rag_assets.lib.ingest.folding import find_folded, fold, folded_with_offsets
from rag_assets.lib.retrieve.external.hits import Hit
from rag_assets.lib.retrieve.external.locate import Locator

# what Sphinx's smart quotes and a site make of what the source says
RENDERED = ("The option “strict” sets the parent’s flags — see below… It is 10\u00a0ms – 20\u202fms long, "
            "ﬁnal and café.")
TYPED = ("The option \"strict\" sets the parent's flags --- see below... It is 10 ms -- 20 ms long, "
         "final and cafe\u0301.")


@pytest.mark.parametrize(("a", "b"), [
    ("“true”", '"true"'), ("parent’s", "parent's"), ("‘x’", "'x'"), ("a – b", "a -- b"), ("a—b", "a---b"),
    ("a—b", "a-b"), ("wait…", "wait..."), ("10\u00a0ms", "10 ms"), ("a\u2009b", "a b"), ("ﬁle", "file"),
    ("soft\u00adhyphen", "softhyphen"), ("zero\u200bwidth", "zerowidth"), ("café", "cafe\u0301"),
    ("x\u2212y", "x-y"), ("  two\n\tlines  ", "two lines"), (RENDERED, TYPED),
])
def test_a_reader_calls_these_the_same(a, b):
    assert fold(a) == fold(b)


@pytest.mark.parametrize(("a", "b"), [("Case", "case"), ("a-b", "a b"), ("«x»", '"x"'), ("x²", "x2"), ("ab", "a b")])
def test_and_these_different(a, b):
    assert fold(a) != fold(b)


@given(st.text(alphabet=st.sampled_from(list("ab -.\n\t\"'") + list("“”‘’–—…\u00a0\u2009\u200bﬁé\u0301\u2212"))))
def test_the_fold_and_its_offsets_agree_and_point_back_into_the_original(text):
    folded, offsets = folded_with_offsets(text)
    assert folded == fold(text)
    assert len(offsets) == len(folded) + 1 and offsets == sorted(offsets) and offsets[-1] == len(text)
    for i, character in enumerate(folded):  # each folded character comes from the original character it names
        assert character in fold(text[offsets[i]]) or (character == " " and fold(text[offsets[i]]) == "")


def test_find_folded_reports_the_canonical_texts_own_offsets():
    text = "Intro.\n\n" + RENDERED + " The end."
    start, end = find_folded(text, TYPED)
    assert text[start:end] == RENDERED  # the span is cut from the canonical text, exactly
    assert find_folded(text, "The end.", start=start) == (len(text) - 8, len(text))
    assert find_folded(text, "Intro.", start=3) is None and find_folded(text, "   ") is None


def test_needles_typed_from_the_sources_pass_the_checks_and_are_judged_held():
    documents = {"conf.html": "Settings\n\nSet it to “true” when the parent’s value — if any — is unset.",
                 "other.html": "Nothing here."}
    typed = Needle(id="n1", needle="Set it to \"true\" when the parent's value -- if any -- is unset.",
                   doc_id="conf.html", questions={"doc": "q", "ticket": "t"})
    assert occurrence_problems([typed], documents) == []
    copied_from_site = Needle(id="n2", needle="Set it to “true” when the parent’s value — if any — is unset.",
                              doc_id="conf.html", questions={})
    assert occurrence_problems([copied_from_site], documents) == []
    twice = {**documents, "copy.html": documents["conf.html"].replace("“", '"').replace("”", '"')}
    assert occurrence_problems([typed], twice) == ["n1: occurs 2 times in the corpus, must occur exactly once"]
    assert heading_problems([Needle(id="h", needle="Settings", doc_id="conf.html", questions={})],
                            {"conf.html": ["Settings"]}) == ["h: is (inside) a heading"]
    canonical = documents["conf.html"]
    assert holds_needle(canonical, 10, len(canonical), typed.needle)
    assert not holds_needle(canonical, 10, len(canonical) - 3, typed.needle)  # cut before its end: not held


def test_the_suggester_and_the_review_fold_too(tmp_path):
    text = "Title\n\nUse the “strict” flag when the parent’s value is unset and nothing else applies here."
    documents = {"a.html": (text, [{"path": "Title", "heading": "Title", "start": 7, "end": len(text)}]),
                 "b.html": ("Other\n\nUse the \"strict\" flag when the parent's value is unset and nothing else "
                            "applies here.", [])}
    mined = candidates(documents)
    assert mined.repeated == 2 and not mined.candidates  # the same sentence, typed two ways, occurs twice
    record = {"id": "n1", "doc_id": "a.html", "needle": "Use the \"strict\" flag when the parent's value is unset and "
              "nothing else applies here.", "questions": {"doc": "Which flag?", "ticket": "flag?"}}
    checked = review([("needles.jsonl:1", record)], {"a.html": documents["a.html"]})
    assert checked.problems == [], json.dumps(checked.problems)


def test_an_external_passage_with_straight_quotes_is_located_in_the_curly_text():
    documents = {"conf.html": "Intro.\n\nSet it to “true” when the parent’s value — if any — is unset."}
    located = Locator(documents).locate(Hit(doc_id=None, text="it to \"true\" when the parent's value -- if any",
                                            score=1.0))
    assert located.ratio == 1.0 and located.doc_id == "conf.html"
    assert documents["conf.html"][located.start:located.end] == "it to “true” when the parent’s value — if any"
