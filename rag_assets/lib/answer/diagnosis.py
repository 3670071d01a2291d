"""The production trace read back: for each traced question that has a needle, which side failed, as the
lesson's diagnosis says. ``ask`` records what it retrieved, what it sent (the sources within the budget) and,
when an answer was verified, what the answer cited (``traces.py``); the needle says which chunk was right.

- ``retrieval``: no retrieved chunk holds the needle in its own content;
- ``context``: a retrieved chunk holds it, but it ranked past the budget and was not sent;
- ``generation``: it was sent, and the answer did not cite it;
- ``cited``: the answer cited a source holding it;
- ``sent, not verified``: it was sent, and no answer was verified against the sources (``ask --verify``);
- ``chunks changed``: the trace names chunks the current partition no longer holds (re-chunked since).

A team's own trace table (the lesson's ``rag_traza``: question, retrieved ids, cited ids, latency, time) is
read the same way against the team's chunk table (``diagnose_retrieved``): its system sends what it
retrieved, so there is no ``context`` side, and ``sent, not verified`` means the row has no cited ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from rag_assets.lib.evalsets.queries import Needle
from rag_assets.lib.ingest.folding import fold

RETRIEVAL, CONTEXT, GENERATION, CITED, UNVERIFIED, CHANGED = (
    "retrieval", "context", "generation", "cited", "sent, not verified", "chunks changed")
SIDES = (RETRIEVAL, CONTEXT, GENERATION, CITED, UNVERIFIED, CHANGED)


def _key(question: str) -> str:
    return fold(question).lower()


def needles_by_question(needles: Sequence[Needle]) -> dict[str, Needle]:
    """Every phrasing of every needle, folded and lower-cased, to its needle."""
    return {_key(question): needle for needle in needles for question in needle.questions.values() if question}


@dataclass(frozen=True)
class Diagnosis:
    asked_at: str
    question: str
    needle_id: str
    strategy: str
    side: str
    rank: int | None  # the rank of the first retrieved chunk holding the needle


def diagnose(trace: Mapping, needle: Needle, contents: Mapping[str, str]) -> Diagnosis:
    """One trace row (``ask_traces``) against its needle; ``contents`` maps the trace's strategy's chunk ids to
    their content."""
    retrieved = [entry["chunk_id"] for entry in trace["retrieved"] or []]
    sent = {source["number"]: source["chunk_id"] for source in trace["sources"] or []}
    folded = fold(needle.needle)
    unknown = [chunk_id for chunk_id in retrieved if chunk_id not in contents]
    holding = [chunk_id for chunk_id in retrieved if chunk_id in contents and folded in fold(contents[chunk_id])]
    rank = retrieved.index(holding[0]) + 1 if holding else None
    if not holding:
        side = CHANGED if unknown else RETRIEVAL
    elif not set(holding) & set(sent.values()):
        side = CONTEXT
    elif trace["cited"] is None:
        side = UNVERIFIED
    else:
        side = CITED if {sent.get(number) for number in trace["cited"]} & set(holding) else GENERATION
    return Diagnosis(str(trace["asked_at"]), trace["question"], needle.id, trace["strategy"], side, rank)


TEAM_INDEX = "team's index"  # the strategy column of a team's trace row


def ids(value: Any) -> list[str] | None:
    """A trace column of chunk ids (a PostgreSQL array, or text "a,b" or "{a,b}"), as text; None for NULL."""
    if value is None:
        return None
    if isinstance(value, str):
        return [part.strip().strip('"') for part in value.strip().strip("{}[]").split(",") if part.strip()]
    return [str(item) for item in value]


def diagnose_retrieved(trace: Mapping, needle: Needle, texts: Mapping[str, str]) -> Diagnosis:
    """One row of a team's trace table against its needle: ``retrieved`` its chunk ids best first, ``cited``
    those its answer cited (NULL: not recorded), ``asked_at`` when (optional); ``texts`` the team's chunk texts
    by id."""
    retrieved, cited = ids(trace["retrieved"]) or [], ids(trace.get("cited"))
    folded = fold(needle.needle)
    holding = [chunk_id for chunk_id in retrieved if chunk_id in texts and folded in fold(texts[chunk_id])]
    rank = retrieved.index(holding[0]) + 1 if holding else None
    if not holding:
        side = CHANGED if any(chunk_id not in texts for chunk_id in retrieved) else RETRIEVAL
    elif cited is None:
        side = UNVERIFIED
    else:
        side = CITED if set(cited) & set(holding) else GENERATION
    return Diagnosis(str(trace.get("asked_at") or ""), trace["question"], needle.id, TEAM_INDEX, side, rank)


def sides(diagnoses: Sequence[Diagnosis]) -> dict[str, int]:
    counts = {side: 0 for side in SIDES}
    for diagnosis in diagnoses:
        counts[diagnosis.side] += 1
    return counts
