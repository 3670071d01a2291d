import json

import pytest

from rag_assets.lib.evalsets.checks import (
    duplicate_id_problems,
    heading_problems,
    occurrence_problems,
    phrasing_problems,
)
from rag_assets.lib.evalsets.judging import holds_needle, needle_holders
from rag_assets.lib.evalsets.queries import (
    OUT_OF_DOMAIN,
    EvalSetError,
    Needle,
    OutOfDomainQuery,
    expand_queries,
    load_needles,
    load_out_of_domain,
    needles_from_rows,
    queries_from_rows,
    query_rows,
    set_version,
)
from rag_assets.lib.ingest.corpus import scan_corpus
from rag_assets.lib.ingest.extraction import extract_document
from rag_assets.settings import DEFAULT_CORPUS_DIR, DEFAULT_EVAL_SET, DEFAULT_OUT_OF_DOMAIN

DOCS = {"a.html": "Intro\n\nThe cat sat on the mat.\n\nThe dog   barked\nloudly.", "b.html": "The cat sat."}
HEADINGS = {"a.html": ["Intro"], "b.html": []}


def test_each_validation_names_the_offending_ids():
    needles = [
        Needle("ok", "a.html", "The dog barked loudly.", {"doc": "d?", "ticket": "t?"}),  # folded: once
        Needle("twice", "a.html", "The cat sat", {"doc": "d?", "ticket": "t?"}),  # also in b.html
        Needle("absent", "a.html", "A bird sang.", {"doc": "d?"}),  # and no ticket
        Needle("heading", "a.html", "Intro", {"doc": "d?", "ticket": "What is the Intro about?"}),
        Needle("elsewhere", "a.html", "The cat sat.", {"doc": "The cat sat. Where?", "ticket": ""}),
    ]
    assert occurrence_problems(needles, DOCS) == [
        "twice: occurs 2 times in the corpus, must occur exactly once",
        "absent: occurs 0 times in the corpus, must occur exactly once",
        "elsewhere: not in its document 'a.html'",  # "The cat sat." is only in b.html
    ]
    assert heading_problems(needles, HEADINGS) == ["heading: is (inside) a heading"]
    assert phrasing_problems(needles) == [
        "absent: no 'ticket' question",
        "heading: the 'ticket' question copies the needle",
        "elsewhere: the 'doc' question copies the needle",
        "elsewhere: no 'ticket' question",
    ]
    assert duplicate_id_problems(["n1:doc", "n1:ticket", "n1:doc", "o1"]) == ["n1:doc: duplicate id"]


def test_malformed_lines_name_file_and_line(tmp_path):
    path = tmp_path / "set.jsonl"
    good = json.dumps({"id": "a", "doc_id": "d", "needle": "n", "questions": {"doc": "q"}})
    path.write_text(good + "\n\n{not json\n")
    with pytest.raises(EvalSetError, match=f"{path}:3: not valid JSON"):
        load_needles(path)
    path.write_text(good + "\n" + json.dumps({"id": "b", "doc_id": "d", "needle": "n"}) + "\n")
    with pytest.raises(EvalSetError, match=f"{path}:2: missing questions"):
        load_needles(path)
    path.write_text('{"id": "o1", "query": "q", "kind": "sideways"}\n')
    with pytest.raises(EvalSetError, match=f"{path}:1: kind must be 'near' or 'off_topic'"):
        load_out_of_domain(path)
    with pytest.raises(EvalSetError, match="does not exist"):
        load_needles(tmp_path / "missing.jsonl")


def test_queries_expand_per_phrasing_then_out_of_domain():
    queries = expand_queries([Needle("n1", "d", "x", {"ticket": "t?", "doc": "d?"})],
                             [OutOfDomainQuery("o1", "weather?", "off_topic")])
    assert [(q.query_id, q.phrasing, q.text, q.query_kind) for q in queries] == [
        ("n1:doc", "doc", "d?", "needle"), ("n1:ticket", "ticket", "t?", "needle"),
        ("o1", OUT_OF_DOMAIN, "weather?", OUT_OF_DOMAIN)]
    assert queries[0].spans == (("d", "x"),) and queries[2].spans == ()


def test_rows_round_trip_to_queries_and_needles():
    needles = [Needle("n1", "d", "x y", {"doc": "d?", "ticket": "t?"}, "code-adjacent")]
    queries = expand_queries(needles, [OutOfDomainQuery("o1", "q", "near")])
    rows = query_rows(queries, {"n1": "code-adjacent", "o1": "near"}, "2", "abc")
    assert [r["kind"] for r in rows] == ["code-adjacent", "code-adjacent", "near"]
    assert queries_from_rows(rows) == queries
    assert needles_from_rows(rows) == needles


def test_a_copied_header_never_counts():
    canonical = "Kettle Care\n\nBoil water."
    # a chunk whose span is "Boil water." cannot hold a needle that lives only in the heading
    assert not holds_needle(canonical, 13, 24, "Kettle Care")
    assert holds_needle(canonical, 13, 24, "Boil  water.")


def test_needle_holders_use_document_spans():
    chunks = [{"chunk_id": "c1", "doc_id": "a.html", "start": 0, "end": 30},
              {"chunk_id": "c2", "doc_id": "a.html", "start": 30, "end": len(DOCS["a.html"])},
              {"chunk_id": "c3", "doc_id": "a.html", "start": 0, "end": len(DOCS["a.html"])}]
    holders = needle_holders([Needle("n", "a.html", "The dog barked loudly.", {})], chunks, DOCS)
    assert holders == {"n": {"c2", "c3"}}


def _default_corpus():
    documents, headings = {}, {}
    for entry in scan_corpus(DEFAULT_CORPUS_DIR):
        extracted = extract_document((DEFAULT_CORPUS_DIR / entry.path).read_bytes(), entry.format, entry.path)
        documents[entry.path] = extracted.text
        headings[entry.path] = [s.heading for s in extracted.sections if s.heading]
    return documents, headings


def test_the_default_set_fits_the_default_corpus():
    needles = load_needles(DEFAULT_EVAL_SET)
    documents, headings = _default_corpus()
    assert len(needles) >= 60
    assert occurrence_problems(needles, documents) == []
    assert heading_problems(needles, headings) == []
    assert phrasing_problems(needles, ("doc", "ticket")) == []
    assert duplicate_id_problems(n.id for n in needles) == []
    # every page with real content has a needle (the two index pages are tables of contents)
    assert {n.doc_id for n in needles} == set(documents) - {"faq/index.html", "tutorial/index.html"}
    assert sum(n.kind == "code-adjacent" for n in needles) >= 12
    # a question never repeats six consecutive words of its needle
    for needle in needles:
        words = needle.needle.lower().split()
        grams = {" ".join(words[i:i + 6]) for i in range(len(words) - 5)}
        for question in needle.questions.values():
            assert not any(gram in question.lower() for gram in grams), needle.id
    out_of_domain = load_out_of_domain(DEFAULT_OUT_OF_DOMAIN)
    assert sum(o.kind == "near" for o in out_of_domain) >= 20
    assert sum(o.kind == "off_topic" for o in out_of_domain) >= 9
    assert duplicate_id_problems([n.id for n in needles] + [o.id for o in out_of_domain]) == []
    assert set_version(DEFAULT_EVAL_SET) != "unversioned"


GOOD = {"id": "n1", "doc_id": "a.html", "needle": "The cat sat on the mat.", "questions": {"doc": "Where did the cat sit?"}}


@pytest.mark.parametrize(("change", "said"), [
    ({"id": None}, "'id' must be a non-empty string, not null"),
    ({"id": "  "}, "'id' is empty"),
    ({"doc_id": 7}, "'doc_id' must be a non-empty string, not a number (7)"),
    ({"needle": ["a"]}, "'needle' must be a non-empty string, not a list"),
    ({"kind": 1}, "'kind' must be a string"),
    ({"questions": ["Where?"]}, "'questions' must map phrasings to questions"),
    ({"questions": {}}, "'questions' must map phrasings to questions"),
    ({"questions": {"doc": 5}}, "the 'doc' question must be a string (or null while it is a draft), not a number"),
    ({"questions": {"doc": "q" * 8001}}, "the 'doc' question is 8,001 characters long; at most 8,000"),
    ({"needle": "word " * 1000}, "the needle is"),
], ids=["null-id", "blank-id", "number-doc", "list-needle", "kind", "list-questions", "no-questions", "number-question",
        "long-question", "long-needle"])
def test_a_needle_line_is_refused_naming_the_field_at_fault(change, said):
    from rag_assets.lib.evalsets.queries import needle_of

    with pytest.raises(EvalSetError, match="^f.jsonl:3: ") as raised:
        needle_of("f.jsonl:3", GOOD | change)
    assert said in str(raised.value), raised.value


def test_a_good_needle_line_and_a_draft_question_are_read():
    from rag_assets.lib.evalsets.queries import needle_of

    needle = needle_of("f:1", GOOD | {"questions": {"doc": "Where?", "ticket": None}})
    assert (needle.id, needle.questions, needle.kind, needle.origin) == ("n1", {"doc": "Where?", "ticket": ""},
                                                                         "prose", "written")
    with pytest.raises(EvalSetError, match="f:1: missing doc_id, questions"):
        needle_of("f:1", {"id": "n", "needle": "x"})
