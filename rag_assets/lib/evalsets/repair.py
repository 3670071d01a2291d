"""A needle file repaired after the corpus changed (``rag-assets needles repair``): a person's decision for each
needle the snapshot lost, written into a new version of the file that keeps each needle's history.

For a needle that ``relocation`` found:

- ``moved``: its ``doc_id`` is updated (the sentence is verbatim; nothing to decide);
- ``edited``: ``accept`` its successor, ``reject`` it (the needle stays as written: the docs will change back),
  ``drop`` the needle, or give ``another`` sentence of the corpus (it must pass the needle rules);
- ``removed`` or ``ambiguous``: ``reject``, ``drop`` or ``another``.

Each change appends to the needle's ``previous`` list what it was (``needle``, ``doc_id``), what the snapshot made
of it (``status``, ``similarity``), the snapshot it was checked against and the decision. A needle without a
decision is left as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from rag_assets.lib.evalsets.queries import EvalSetError, json_lines, json_text
from rag_assets.lib.evalsets.relocation import EDITED, KEPT, MOVED, Relocation, Relocator
from rag_assets.lib.ingest.folding import fold

ACCEPT, REJECT, DROP, ANOTHER = "accept", "reject", "drop", "another"
CHOICES = (ACCEPT, REJECT, DROP)


@dataclass(frozen=True)
class Decision:
    needle_id: str
    choice: str  # ACCEPT, REJECT, DROP or ANOTHER
    needle: str = ""  # ANOTHER: the sentence chosen instead
    doc_id: str = ""  # ANOTHER: its document (default: where the needle was)


def read_decisions(path: Path) -> dict[str, Decision]:
    """A choices file: JSON Lines ``{"id": "t1", "choice": "accept"}`` (or reject, drop), or ``{"id": "t1",
    "needle": "another sentence", "doc_id": "..."}``; EvalSetError naming the file, line and field at fault."""
    decisions: dict[str, Decision] = {}
    for where, record in json_lines(path, "choices file"):
        needle_id = record.get("id")
        if not isinstance(needle_id, str) or not needle_id.strip():
            raise EvalSetError(f"{where}: 'id' must be a needle's id, not {json_text(needle_id)}")
        if needle_id in decisions:
            raise EvalSetError(f"{where}: a second decision for {needle_id}")
        if "needle" in record:
            if not isinstance(record["needle"], str) or not record["needle"].strip():
                raise EvalSetError(f"{where}: 'needle' must be the sentence chosen, not {json_text(record['needle'])}")
            doc_id = record.get("doc_id", "")
            if not isinstance(doc_id, str):
                raise EvalSetError(f"{where}: 'doc_id' must be a string, not {json_text(doc_id)}")
            decisions[needle_id] = Decision(needle_id, ANOTHER, record["needle"], doc_id)
            continue
        choice = record.get("choice")
        if choice not in CHOICES:
            raise EvalSetError(f"{where}: 'choice' must be one of {', '.join(CHOICES)} (or give 'needle': another "
                               f"sentence), not {json_text(choice)}")
        decisions[needle_id] = Decision(needle_id, choice)
    return decisions


@dataclass
class Repair:
    records: list[dict]  # the new file's lines, in order (dropped needles left out)
    done: list[str]  # one line per needle changed, saying how
    undecided: list[str]  # lost needles no decision was given for, left as written


def repaired(records: Sequence[dict], relocations: Sequence[Relocation], decisions: Mapping[str, Decision],
             relocator: Relocator, snapshot: str) -> Repair:
    """The needle file's lines with the decisions applied (``records`` as read; ``relocations`` of the same order).
    EvalSetError names a decision that does not fit (an unknown id, accept without a successor, another sentence
    that breaks the needle rules)."""
    known = {record["id"] for record in records}
    unknown = sorted(set(decisions) - known)
    if unknown:
        raise EvalSetError(f"the choices file decides needles the needle file does not have: {', '.join(unknown)}")
    result = Repair([], [], [])
    for record, found in zip(records, relocations, strict=True):
        decision = decisions.get(found.needle_id)
        if found.status == KEPT or (decision is None and found.status != MOVED):
            if found.status != KEPT:
                result.undecided.append(f"{found.needle_id}: {found.reason} (no decision: left as written)")
            result.records.append(dict(record))
            continue
        if found.status == MOVED and (decision is None or decision.choice == ACCEPT):
            result.records.append(_changed(record, found, snapshot, "moved", found.needle, found.doc_id))
            result.done.append(f"{found.needle_id}: moved to {found.doc_id}")
            continue
        if decision.choice == REJECT:
            result.records.append(dict(record))
            result.done.append(f"{found.needle_id}: rejected, left as written")
        elif decision.choice == DROP:
            result.done.append(f"{found.needle_id}: dropped from the set")
        elif decision.choice == ACCEPT:
            if found.status != EDITED:
                raise EvalSetError(f"{found.needle_id}: 'accept' needs a successor, and none is offered ({found.reason})"
                                   "; reject, drop, or give another sentence")
            result.records.append(_changed(record, found, snapshot, ACCEPT, found.successor, found.doc_id))
            result.done.append(f"{found.needle_id}: its successor accepted")
        else:
            doc_id = decision.doc_id or found.doc_id
            problem = relocator.successor_problem(decision.needle, doc_id) if doc_id in relocator.documents \
                else f"names a document the corpus does not have ({doc_id})"
            if problem is None and fold(decision.needle) not in relocator.folded[doc_id]:
                problem = f"is not verbatim in {doc_id}"
            if problem:
                raise EvalSetError(f"{found.needle_id}: the sentence chosen instead {problem}")
            result.records.append(_changed(record, found, snapshot, ANOTHER, decision.needle.strip(), doc_id))
            result.done.append(f"{found.needle_id}: replaced by the sentence chosen")
    return result


def _changed(record: Mapping, found: Relocation, snapshot: str, decision: str, needle: str, doc_id: str) -> dict:
    history = list(record.get("previous") or []) + [{
        "needle": record["needle"], "doc_id": record["doc_id"], "status": found.status,
        "similarity": found.similarity, "snapshot": snapshot, "decision": decision}]
    return {**record, "needle": needle, "doc_id": doc_id, "previous": history}
