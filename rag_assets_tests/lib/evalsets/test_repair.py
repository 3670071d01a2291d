"""A needle file repaired by a person's decisions: successors accepted, rejected, dropped or replaced, moved
needles followed, and each change kept in the needle's history."""

import json

import pytest

from rag_assets.lib.evalsets.queries import EvalSetError, needle_of
from rag_assets.lib.evalsets.relocation import Relocator
from rag_assets.lib.evalsets.repair import ACCEPT, ANOTHER, DROP, REJECT, Decision, read_decisions, repaired

RINSE = "Let the mixture stand for one hour before rinsing it off with cold water."
EDITED = RINSE.replace("cold", "warm")
OTHER = "The cache keeps every vector it computed on the local disk of the machine."
SPARE = "Dry the floor with a soft cotton cloth after every single wash."
DOCS = {"care.md": f"Sweep it daily. {EDITED} {SPARE}\n", "cache.md": f"{OTHER} It is safe to delete it.\n"}
RECORDS = [{"id": "k1", "doc_id": "care.md", "needle": RINSE, "questions": {"doc": "How long?"}},
           {"id": "k2", "doc_id": "care.md", "needle": OTHER, "questions": {"doc": "Where?"}},
           {"id": "k3", "doc_id": "care.md", "needle": "A sentence no longer on any page of the corpus at all.",
            "questions": {"doc": "What?"}},
           {"id": "k4", "doc_id": "cache.md", "needle": "It is safe to delete it.", "questions": {"doc": "Safe?"}}]


def repair(decisions, records=RECORDS):
    relocator = Relocator(DOCS)
    relocations = [relocator.relocate(needle_of(f"f:{i}", r)) for i, r in enumerate(records, 1)]
    return repaired(records, relocations, decisions, relocator, "snap1")


def test_an_accepted_successor_replaces_the_needle_and_its_history_keeps_what_it_was():
    result = repair({"k1": Decision("k1", ACCEPT)})
    k1 = result.records[0]
    assert (k1["needle"], k1["doc_id"], k1["questions"]) == (EDITED, "care.md", {"doc": "How long?"})
    [history] = k1["previous"]
    assert history["needle"] == RINSE and history["status"] == "edited" and history["snapshot"] == "snap1"
    assert history["decision"] == "accept" and 0.8 < history["similarity"] < 1
    assert "k1: its successor accepted" in result.done
    assert result.records[3] == RECORDS[3]  # a kept needle is left exactly as it was


def test_a_moved_needle_follows_its_sentence_without_a_decision():
    k2 = repair({}).records[1]
    assert k2["doc_id"] == "cache.md" and k2["previous"][0]["doc_id"] == "care.md"
    assert k2["previous"][0]["decision"] == "moved"


def test_reject_leaves_the_needle_drop_removes_it_and_no_decision_is_said():
    result = repair({"k1": Decision("k1", REJECT), "k3": Decision("k3", DROP)})
    assert [r["id"] for r in result.records] == ["k1", "k2", "k4"] and result.records[0] == RECORDS[0]
    assert "k3: dropped from the set" in result.done and "k1: rejected, left as written" in result.done
    undecided = repair({}).undecided
    assert [line.split(":")[0] for line in undecided] == ["k1", "k3"]


def test_another_sentence_must_be_a_needle_of_this_corpus():
    result = repair({"k3": Decision("k3", ANOTHER, SPARE, "care.md")})
    assert result.records[2]["needle"] == SPARE and result.records[2]["previous"][0]["decision"] == "another"
    with pytest.raises(EvalSetError, match="k3: the sentence chosen instead occurs 0 times in the corpus"):
        repair({"k3": Decision("k3", ANOTHER, "Words that are nowhere.", "care.md")})
    with pytest.raises(EvalSetError, match="names a document the corpus does not have"):
        repair({"k3": Decision("k3", ANOTHER, SPARE, "gone.md")})
    with pytest.raises(EvalSetError, match="is not verbatim in cache.md"):  # once in the corpus, but elsewhere
        repair({"k3": Decision("k3", ANOTHER, SPARE, "cache.md")})


def test_a_decision_that_does_not_fit_is_refused_naming_the_needle():
    with pytest.raises(EvalSetError, match="k3: 'accept' needs a successor"):
        repair({"k3": Decision("k3", ACCEPT)})
    with pytest.raises(EvalSetError, match="decides needles the needle file does not have: zz"):
        repair({"zz": Decision("zz", DROP)})


def test_a_second_repair_appends_to_the_history():
    once = repair({"k1": Decision("k1", ACCEPT)}).records[0]
    again = {**once, "needle": RINSE}  # the docs changed back
    record = repair({"k1": Decision("k1", ACCEPT)}, [again, *RECORDS[1:]]).records[0]
    assert [h["needle"] for h in record["previous"]] == [RINSE, RINSE]


@pytest.mark.parametrize("line, said", [
    ('{"id": "k1"}', "'choice' must be one of accept, reject, drop"),
    ('{"id": "k1", "choice": "yes"}', "not a string (\"yes\")"),
    ('{"choice": "accept"}', "'id' must be a needle's id, not null"),
    ('{"id": "k1", "needle": ""}', "'needle' must be the sentence chosen"),
    ('{"id": "k1", "needle": "x", "doc_id": 3}', "'doc_id' must be a string, not a number (3)"),
    ('{"id": "k1", "choice": "drop"}\n{"id": "k1", "choice": "accept"}', ":2: a second decision for k1"),
])
def test_a_bad_choices_line_is_named_by_file_and_line(tmp_path, line, said):
    path = tmp_path / "choices.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(EvalSetError) as raised:
        read_decisions(path)
    assert said in str(raised.value) and str(path) in str(raised.value)


def test_read_decisions_reads_each_kind(tmp_path):
    path = tmp_path / "choices.jsonl"
    path.write_text('{"id": "k1", "choice": "accept"}\n{"id": "k3", "needle": "S.", "doc_id": "a.md"}\n')
    assert read_decisions(path) == {"k1": Decision("k1", ACCEPT), "k3": Decision("k3", ANOTHER, "S.", "a.md")}


@pytest.mark.parametrize("previous, said", [
    ("old", "'previous' must be a list of earlier versions, not a string"),
    (["old"], "previous[0] must be an object"),
    ([{"doc_id": "a"}], "previous[0] has no 'needle'"),
    ([{"needle": "x", "snapshot": 7}], "previous[0].snapshot must be a string, not a number (7)"),
])
def test_a_malformed_history_is_refused_naming_the_line(previous, said):
    with pytest.raises(EvalSetError) as raised:
        needle_of("needles.jsonl:4", {**RECORDS[0], "previous": previous})
    assert str(raised.value).startswith("needles.jsonl:4: ") and said in str(raised.value)
    assert json.dumps(needle_of("n:1", {**RECORDS[0], "previous": [{"needle": "x"}]}).needle) == json.dumps(RINSE)
