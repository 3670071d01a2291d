import json

import pytest

from rag_assets.lib.corpus import scan_corpus
from rag_assets.lib.evalset import (
    EvalSetError, Needle, expand_queries, holds_needle, load_needles, needle_holders, needle_problems,
)
from rag_assets.lib.extraction import extract_document
from rag_assets.lib.paths import DEFAULT_CORPUS_DIR, DEFAULT_EVAL_SET

DOCS = {"a.html": "Intro\n\nThe cat sat on the mat.\n\nThe dog   barked\nloudly.", "b.html": "The cat sat."}
HEADINGS = {"a.html": ["Intro"], "b.html": []}


def test_problems_name_each_offending_id():
    needles = [
        Needle("ok", "a.html", "The dog barked loudly.", {"doc": "q"}),  # whitespace folded: found once
        Needle("twice", "a.html", "The cat sat", {"doc": "q"}),  # also in b.html
        Needle("absent", "a.html", "A bird sang.", {"doc": "q"}),
        Needle("heading", "a.html", "Intro", {"doc": "q"}),
        Needle("ok", "b.html", "The cat sat.", {"doc": "q"}),  # duplicate id; a.html has "cat sat on"
    ]
    problems = needle_problems(needles, DOCS, HEADINGS)
    assert problems == [
        "twice: occurs 2 times in the corpus, must occur exactly once",
        "absent: occurs 0 times in the corpus, must occur exactly once",
        "heading: is (inside) a heading",
        "ok: duplicate id",
    ]


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "set.jsonl"
    good = json.dumps({"id": "a", "doc_id": "d", "needle": "n", "questions": {"doc": "q"}})
    path.write_text(good + "\n{not json\n")
    with pytest.raises(EvalSetError, match=f"{path}:2: not valid JSON"):
        load_needles(path)
    path.write_text(good + "\n" + json.dumps({"id": "b", "doc_id": "d", "needle": "n"}) + "\n")
    with pytest.raises(EvalSetError, match=f"{path}:2: missing questions"):
        load_needles(path)


def test_queries_expand_per_phrasing():
    queries = expand_queries([Needle("n1", "d", "x", {"ticket": "t?", "doc": "d?"})])
    assert [(q.query_id, q.phrasing, q.text) for q in queries] == [("n1:doc", "doc", "d?"), ("n1:ticket", "ticket", "t?")]


def test_a_copied_header_never_counts():
    canonical = "Kettle Care\n\nBoil water."
    # a chunk whose span is "Boil water." cannot hold a needle that lives only in the heading
    assert not holds_needle(canonical, 13, 24, "Kettle Care")
    assert holds_needle(canonical, 13, 24, "Boil  water.")


def test_needle_holders_use_document_spans():
    chunks = [{"chunk_id": "c1", "doc_id": "a.html", "span_from": 0, "to": 30},
              {"chunk_id": "c2", "doc_id": "a.html", "span_from": 30, "to": len(DOCS["a.html"])},
              {"chunk_id": "c3", "doc_id": "a.html", "span_from": 0, "to": len(DOCS["a.html"])}]
    holders = needle_holders([Needle("n", "a.html", "The dog barked loudly.", {})], chunks, DOCS)
    assert holders == {"n": {"c2", "c3"}}


def test_starter_set_fits_the_default_corpus():
    needles = load_needles(DEFAULT_EVAL_SET)
    assert len(needles) >= 10
    documents, headings = {}, {}
    for entry in scan_corpus(DEFAULT_CORPUS_DIR):
        extracted = extract_document((DEFAULT_CORPUS_DIR / entry.path).read_bytes(), entry.format, entry.path)
        documents[entry.path] = extracted.text
        headings[entry.path] = [s.heading for s in extracted.sections if s.heading]
    assert needle_problems(needles, documents, headings) == []
    for needle in needles:
        assert all(needle.needle not in question for question in needle.questions.values())
