"""The production trace read back: which side failed for a traced question with a needle."""

from __future__ import annotations

from rag_assets.lib.answer.diagnosis import diagnose, diagnose_retrieved, ids, needles_by_question, sides
from rag_assets.lib.evalsets.queries import Needle

NEEDLE = Needle("n1", "a.md", "The log is kept for thirty days.", {"doc": "How long is the log kept?",
                                                                    "ticket": "my logs vanish after a month??"})
CONTENTS = {"c1": "Other text.", "c2": "Retention. The log is kept for   thirty days.", "c3": "More."}


def trace(retrieved, sent, cited):
    return {"asked_at": "2026-12-04 08:00:00", "question": "my logs vanish after a month??", "strategy": "s",
            "retrieved": [{"chunk_id": c, "distance": 0.1} for c in retrieved],
            "sources": [{"number": n, "chunk_id": c} for n, c in enumerate(sent, 1)], "cited": cited}


def test_each_side_is_told_from_what_was_retrieved_sent_and_cited():
    cases = {
        "retrieval": trace(["c1", "c3"], ["c1"], [1]),
        "context": trace(["c1", "c3", "c2"], ["c1", "c3"], [1]),
        "generation": trace(["c1", "c2"], ["c1", "c2"], [1]),
        "cited": trace(["c1", "c2"], ["c1", "c2"], [2]),
        "sent, not verified": trace(["c2"], ["c2"], None),
        "chunks changed": trace(["gone"], [], None),
    }
    found = {side: diagnose(row, NEEDLE, CONTENTS) for side, row in cases.items()}
    assert {side: d.side for side, d in found.items()} == {side: side for side in cases}
    assert found["context"].rank == 3 and found["retrieval"].rank is None
    assert sides(list(found.values())) == {side: 1 for side in cases}


def test_a_trace_finds_its_needle_by_any_phrasing_whatever_its_case_and_spacing():
    by_question = needles_by_question([NEEDLE])
    assert by_question["my logs vanish after a month??"] is NEEDLE
    assert by_question["how long is the log kept?"] is NEEDLE


def test_a_teams_trace_row_is_told_from_its_retrieved_and_cited_ids_against_its_chunk_table():
    texts = {"11": "Other text.", "12": "Retention. The log is kept for   thirty days.", "13": "More."}

    def row(retrieved, cited):
        return {"question": "my logs vanish after a month??", "retrieved": retrieved, "cited": cited}
    cases = {"retrieval": row([11, 13], [11]), "generation": row([11, 12], [11]), "cited": row(["11", "12"], "{12}"),
             "sent, not verified": row("{13,12}", None), "chunks changed": row([99], [])}
    found = {side: diagnose_retrieved(trace, NEEDLE, texts) for side, trace in cases.items()}
    assert {side: d.side for side, d in found.items()} == {side: side for side in cases}
    assert found["sent, not verified"].rank == 2 and found["cited"].strategy == "team's index"
    assert ids('{"a b",c}') == ["a b", "c"] and ids(None) is None and ids([]) == []
