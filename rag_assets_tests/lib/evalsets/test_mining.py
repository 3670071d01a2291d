"""Needle candidates mined from a corpus, and the review of a needle file being written."""

from __future__ import annotations

import numpy as np

from rag_assets.lib.evalsets.mining import candidates, review, sentences_of, shared_run, statement_score

TEXT = ("Kettles\n\nFill the kettle halfway with equal parts white vinegar and water, then boil it once.\n\n"
        "for x in range(3):\n    print(x)\n\nModel | Watts | Price\n\nAlice Bob Carol Dave Erin Frank Grace Heidi.\n\n"
        "Rinse the kettle twice with fresh water before you make any tea again.")
SECTIONS = [{"path": "Kettles", "heading": "Kettles", "level": 1, "anchor": "k", "start": 0, "end": len(TEXT)}]


def test_only_prose_sentences_are_candidates():
    found = [c.text for c in sentences_of("k.html", TEXT, SECTIONS)]
    assert found == ["Fill the kettle halfway with equal parts white vinegar and water, then boil it once.",
                     "Rinse the kettle twice with fresh water before you make any tea again."]
    candidate = sentences_of("k.html", TEXT, SECTIONS)[0]
    assert TEXT[candidate.start:candidate.end] == candidate.text and candidate.section == "Kettles"


def test_a_repeated_or_restated_sentence_is_left_out_and_documents_take_turns():
    twice = "Descale the kettle every month if your tap water is hard or chalky."
    documents = {"a.html": (TEXT + "\n\n" + twice, SECTIONS), "b.html": (twice + "\n\n" + TEXT.replace("Fill", "Pour"),
                                                                          SECTIONS)}
    mined = candidates(documents, per_document=2, total=3)
    assert [c.text.split()[0] for c in mined.candidates] == ["Fill", "Pour"]  # one per document, in turn
    assert mined.repeated == 4  # the two sentences both documents hold, counted where they occur

    def embed(texts):  # the two "Rinse ..." sentences (one per document) mean the same; the rest differ
        vectors = np.zeros((len(texts), len(texts) + 1), dtype=np.float32)
        for i, text in enumerate(texts):
            vectors[i, 0 if text.startswith("Rinse") else i + 1] = 1.0
        return vectors

    meaning = candidates({"a.html": (TEXT, SECTIONS), "b.html": (TEXT.replace("Fill", "Pour").replace(
        "twice", "two times"), SECTIONS)}, embed=embed)
    assert not any(c.text.startswith("Rinse") for c in meaning.candidates) and meaning.restated == 2


def test_review_finds_what_the_evaluation_would_refuse_by_line_and_reports_drafts_and_coverage():
    documents = {"k.html": (TEXT, SECTIONS), "other.html": ("Another page entirely about toasters and crumbs.", [])}
    records = [
        ("n.jsonl:1", {"id": "a", "doc_id": "k.html", "needle": "Fill the kettle halfway with equal parts white vinegar",
                       "questions": {"doc": "How do I descale a kettle?", "ticket": "white crust in my kettle"}}),
        ("n.jsonl:2", {"id": "a", "doc_id": "k.html", "needle": "the kettle", "questions": {"doc": "", "ticket": ""}}),
        ("n.jsonl:3", {"id": "c", "doc_id": "k.html", "needle": "Kettles", "questions": {
            "doc": "Rinse the kettle twice with fresh water before you make tea?", "ticket": "x"}}),
    ]
    found = review(records, documents)
    assert "n.jsonl:2: id 'a' is used already at n.jsonl:1" in found.problems
    assert any(p.startswith("n.jsonl:2: a: the needle occurs") for p in found.problems)
    assert "n.jsonl:3: c: the needle is (inside) a heading" in found.problems
    assert found.drafts == ["n.jsonl:2: a: no 'doc' or 'ticket' question yet"]
    assert found.uncovered_documents == ["other.html"]
    assert shared_run("How do I fill the kettle halfway with vinegar?", "Fill the kettle halfway with equal parts") == 5
    copying = review([("n.jsonl:1", {"id": "a", "doc_id": "k.html",
                                     "needle": "Rinse the kettle twice with fresh water before you make any tea again.",
                                     "questions": {"doc": "Why rinse the kettle twice with fresh water before you make "
                                                          "any tea?", "ticket": "tea tastes of vinegar"}})], documents)
    assert copying.copied and "shares 12 consecutive words" in copying.copied[0]


def test_a_section_offers_its_plainest_statement_not_its_first_sentence():
    text = ("This chapter describes some things you have learned about already in more detail.\n\n"
            "See the next section for the details of the kettle and its many parts.\n\n"
            "A kettle with a limescale crust uses more electricity to boil the same water.")
    sections = [{"path": "Kettles", "heading": "Kettles", "level": 1, "anchor": "k", "start": 0, "end": len(text)}]
    mined = candidates({"k.html": (text, sections)}, per_document=2)
    assert [c.text.split()[0] for c in mined.candidates] == ["A", "See"]  # the statement, then the lesser evil
    assert statement_score("A kettle uses more electricity.") > statement_score("It’s what we use below.")


JAPANESE = "東京は日本の首都であり、世界でも有数の大都市として知られている。富士山は静岡県と山梨県にまたがる活火山で、日本で最も高い山である。"
ARABIC = ("القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها من حيث عدد السكان. "
          "يعد نهر النيل أطول نهر في العالم ويمر عبر إحدى عشرة دولة أفريقية.")


def test_japanese_and_arabic_pages_give_candidates_and_a_page_without_prose_is_named():
    mined = candidates({"ja.md": (JAPANESE, []), "ar.md": (ARABIC, []), "code.md": ("x = 1; y = 2", []),
                        "empty.md": ("", [])})
    texts = [candidate.text for candidate in mined.candidates]
    assert "富士山は静岡県と山梨県にまたがる活火山で、日本で最も高い山である。" in texts
    assert "يعد نهر النيل أطول نهر في العالم ويمر عبر إحدى عشرة دولة أفريقية." in texts
    assert len(texts) == 4 and all(JAPANESE.count(t) + ARABIC.count(t) == 1 for t in texts)
    assert mined.without_prose == ["code.md"]  # a page with text and no sentence that could serve; not the empty one
    assert sentences_of("ja.md", "見出し", []) == []  # a heading's length is no sentence
