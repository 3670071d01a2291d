"""Needles that follow the edits: every needle of a set re-located in a new corpus snapshot before the blocking
checks, so that one sentence a writer rewrote does not stop the evaluation.

Each needle is, in the new snapshot:

- ``kept``: still verbatim (folded: ``folding.fold``), once in the corpus, in its own document;
- ``moved``: verbatim and once in the corpus, but in another document (its new place is recorded);
- ``edited``: not verbatim, but a sentence of the snapshot aligns with it, by the folded character alignment the
  external retrievers' locator uses (``ingest.alignment``), at least ``SUCCESSOR_SIMILARITY`` alike: offered as
  its successor, for a person to accept (``rag-assets needles repair``);
- ``removed``: nothing aligns with it;
- ``ambiguous``: verbatim, but more than once in the corpus, or a heading: it no longer singles a place out.

Kept and moved needles hold: the evaluation goes on with them. The others are lost until a person accepts a
successor; above ``MAX_LOST_SHARE`` of the set, the evaluation stops, naming them.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import pyarrow as pa

from rag_assets.lib.evalsets.checks import headings_by_document, in_a_heading
from rag_assets.lib.evalsets.loading import EvalSet
from rag_assets.lib.evalsets.pooling import sentence_spans
from rag_assets.lib.evalsets.queries import Needle
from rag_assets.lib.formats.markdown import escape_markdown, excerpt, markdown_table
from rag_assets.lib.ingest.alignment import Aligner
from rag_assets.lib.ingest.documents import canonical_texts
from rag_assets.lib.ingest.folding import fold

KEPT, MOVED, EDITED, REMOVED, AMBIGUOUS = "kept", "moved", "edited", "removed", "ambiguous"
HELD = (KEPT, MOVED)  # the needles an evaluation goes on with
LOST = (EDITED, REMOVED, AMBIGUOUS)
SUCCESSOR_SIMILARITY = 0.8  # the least difflib ratio of the folded needle and the folded sentence offered as its
# successor (bench/needle_edits.py measured the edits writers make against the nearest unrelated sentence)
CHANGES_KEY = b"rag_assets.needle_changes"  # the eval_set file's key-value metadata: the needles not kept, as JSON
MAX_LOST_SHARE = 0.2  # the default of the setting evaluation.max_lost_needles


@dataclass(frozen=True)
class Relocation:
    needle_id: str
    status: str  # KEPT, MOVED, EDITED, REMOVED or AMBIGUOUS
    doc_id: str  # where the needle (or its successor) is now; for a removed one, where it was
    previous_doc_id: str  # where the needle file says it is
    needle: str  # as the needle file has it
    successor: str | None = None  # edited: the sentence of the snapshot offered in its place
    similarity: float = 1.0  # 1.0 when verbatim; else the alignment of the needle and its best sentence
    reason: str = ""

    @property
    def held(self) -> bool:
        return self.status in HELD

    def row(self) -> dict:
        return {"needle_id": self.needle_id, "status": self.status, "doc_id": self.doc_id,
                "previous_doc_id": self.previous_doc_id, "needle": self.needle, "successor": self.successor,
                "similarity": self.similarity, "reason": self.reason}


def similarity(needle: str, sentence: str) -> float:
    """How alike a needle and a sentence read: difflib's ratio (twice the matched characters over both lengths)
    of their folded, case-folded texts, so a clause added counts as well as a word changed."""
    a, b = fold(needle).casefold(), fold(sentence).casefold()
    return round(difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(), 4) if a and b else 0.0


class Relocator:
    """Re-locates needles in the canonical texts and headings of a snapshot (folded once per document)."""

    def __init__(self, documents: Mapping[str, str], headings: Mapping[str, Iterable[str]] | None = None) -> None:
        self.documents = dict(documents)
        self.folded = {doc_id: fold(text) for doc_id, text in self.documents.items()}
        self.headings = {doc_id: [fold(h) for h in texts] for doc_id, texts in (headings or {}).items()}
        self._aligner: Aligner | None = None

    def relocate(self, needle: Needle) -> Relocation:
        folded = fold(needle.needle)
        found = {doc_id: text.count(folded) for doc_id, text in self.folded.items() if folded and folded in text}
        total = sum(found.values())
        if total == 1:
            [doc_id] = found
            if in_a_heading(folded, self.headings.get(doc_id, ())):
                return self._lost(needle, AMBIGUOUS, doc_id, 1.0, f"is (inside) a heading of {doc_id}")
            if doc_id == needle.doc_id:
                return Relocation(needle.id, KEPT, doc_id, needle.doc_id, needle.needle)
            return Relocation(needle.id, MOVED, doc_id, needle.doc_id, needle.needle,
                              reason=f"moved from {needle.doc_id} to {doc_id}")
        if total > 1:
            places = ", ".join(f"{doc_id} ({count})" for doc_id, count in sorted(found.items()))
            return self._lost(needle, AMBIGUOUS, needle.doc_id, 1.0, f"occurs {total} times in the corpus: {places}")
        return self._successor(needle)

    def _lost(self, needle: Needle, status: str, doc_id: str, alike: float, reason: str,
              successor: str | None = None) -> Relocation:
        return Relocation(needle.id, status, doc_id, needle.doc_id, needle.needle, successor, alike, reason)

    def _successor(self, needle: Needle) -> Relocation:
        """The nearest sentence of the snapshot: where the locator aligns the needle (its own document first,
        then any), widened to the whole sentences it touches."""
        if self._aligner is None:
            self._aligner = Aligner(self.documents)
        best: tuple[float, str, str] | None = None  # (similarity, doc_id, sentence)
        for doc_id in ([needle.doc_id] if needle.doc_id in self.documents else []) + [None]:
            located = self._aligner.align(needle.needle, doc_id)
            if located.doc_id is None:
                continue
            sentence = whole_sentences(self.documents[located.doc_id], located.start, located.end)
            alike = similarity(needle.needle, sentence)
            if best is None or alike > best[0]:
                best = (alike, located.doc_id, sentence)
            if alike >= SUCCESSOR_SIMILARITY:
                break
        if best is None or best[0] < SUCCESSOR_SIMILARITY:
            alike = best[0] if best else 0.0
            return self._lost(needle, REMOVED, needle.doc_id, alike,
                              "removed: no sentence of the snapshot is like it" + (f" (the nearest {alike:.2f})" if best else ""))
        alike, doc_id, sentence = best
        problem = self.successor_problem(sentence, doc_id)
        if problem:
            return self._lost(needle, REMOVED, doc_id, alike, f"removed: its nearest sentence {problem}")
        where = "" if doc_id == needle.doc_id else f", moved to {doc_id}"
        return self._lost(needle, EDITED, doc_id, alike, f"edited ({alike:.2f} alike{where})", sentence)

    def successor_problem(self, sentence: str, doc_id: str) -> str | None:
        """Why a sentence could not replace a needle (the needle rules), or None."""
        folded = fold(sentence)
        total = sum(text.count(folded) for text in self.folded.values())
        if total != 1:
            return f"occurs {total} times in the corpus"
        if in_a_heading(folded, self.headings.get(doc_id, ())):
            return "is (inside) a heading"
        return None


def whole_sentences(text: str, start: int, end: int) -> str:
    """``text[start:end]`` widened to the whole sentences (``pooling.sentence_spans``) it touches."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    touched = [(s, e) for s, e in sentence_spans(text, line_start, line_end) if s < end and e > start]
    if not touched:
        return text[start:end].strip()
    return text[touched[0][0]:touched[-1][1]]


def relocate(needles: Sequence[Needle], documents: Mapping[str, str],
             headings: Mapping[str, Iterable[str]] | None = None) -> list[Relocation]:
    """Every needle re-located in a snapshot, in the set's order."""
    relocator = Relocator(documents, headings)
    return [relocator.relocate(needle) for needle in needles]


def held_needles(needles: Sequence[Needle], relocations: Sequence[Relocation]) -> list[Needle]:
    """The needles an evaluation goes on with, each in the document it is in now."""
    return [Needle(n.id, r.doc_id, n.needle, n.questions, n.kind, n.origin)
            for n, r in zip(needles, relocations, strict=True) if r.held]


def too_many_lost(relocations: Sequence[Relocation], max_share: float = MAX_LOST_SHARE) -> str | None:
    """Why the evaluation stops (more than ``max_share`` of the needles lost, each named with what happened), or
    None."""
    lost = [r for r in relocations if not r.held]
    if not relocations or len(lost) / len(relocations) <= max_share:
        return None
    named = "; ".join(lost_lines(relocations))
    return (f"{len(lost)} of {len(relocations)} needles ({len(lost) / len(relocations):.0%}) no longer hold in this "
            f"corpus snapshot, more than evaluation.max_lost_needles ({max_share:.0%}): {named}. Run `rag-assets needles "
            f"repair` to accept their successors, or raise RAG_ASSETS_MAX_LOST_NEEDLES")


def lost_lines(relocations: Sequence[Relocation]) -> list[str]:
    """One line per needle that does not hold, naming it and what happened."""
    return [f"{r.needle_id}: {r.reason}" for r in relocations if not r.held]


def counts(relocations: Sequence[Relocation]) -> dict[str, int]:
    """How many needles are in each state (every state named, zeros included)."""
    return {status: sum(r.status == status for r in relocations) for status in (*HELD, *LOST)}


def counts_of_changes(changes: Sequence[Mapping], asked: int) -> dict[str, int]:
    """``counts`` from what an evaluation set's file carries: its needles not kept (``changes_of``) and how many
    needles it asks (the kept and the moved)."""
    found = {status: sum(c["status"] == status for c in changes) for status in (*HELD, *LOST)}
    return found | {KEPT: asked - found[MOVED]}


def relocate_eval_set(eval_set: EvalSet, extracted_rows: list[dict]) -> tuple[EvalSet, list[Relocation]]:
    """The set as this snapshot's evaluation asks it (``following_the_snapshot``), and what happened to each needle."""
    relocations = relocate(eval_set.needles, canonical_texts(extracted_rows), headings_by_document(extracted_rows))
    return following_the_snapshot(eval_set, relocations), relocations


def following_the_snapshot(eval_set: EvalSet, relocations: Sequence[Relocation]) -> EvalSet:
    """The evaluation set an evaluation of this snapshot asks: its held needles, each where it is now. When every
    needle is kept it is the set as loaded; otherwise its rows' ``eval_hash`` is the files' hash with the outcome
    of the relocation after a dot, so that what was built from another outcome is told apart, while the set's
    version (``eval_version``) stays the file's until a person accepts a successor."""
    if all(r.status == KEPT for r in relocations):
        return eval_set
    outcome = json.dumps([(r.needle_id, r.status, r.doc_id) for r in relocations], separators=(",", ":"))
    digest = f"{eval_set.digest}.{hashlib.sha256(outcome.encode()).hexdigest()[:8]}"
    return eval_set.with_needles(held_needles(eval_set.needles, relocations), digest)


def file_hash(eval_hash: str | None) -> str | None:
    """The needle files' own hash in an ``eval_hash`` (without the relocation's outcome)."""
    return eval_hash.split(".", 1)[0] if eval_hash else eval_hash


def changes_table(relocations: Sequence[Relocation]) -> str:
    """The needles that are not kept, as Markdown: what happened to each, and the successor offered."""
    changed = [r for r in relocations if r.status != KEPT]
    if not changed:
        return "every needle is verbatim, once, in its own document"
    return markdown_table([("needle", lambda r: escape_markdown(r.needle_id)), ("now", lambda r: r.status),
                           ("document", lambda r: escape_markdown(r.doc_id)),
                           ("similarity", lambda r: f"{r.similarity:.2f}"),
                           ("what happened", lambda r: escape_markdown(r.reason)),
                           ("successor offered", lambda r: escape_markdown(excerpt(r.successor or "")))], changed)


def with_changes(table: pa.Table, relocations: Sequence[Relocation]) -> pa.Table:
    """The evaluation set's table carrying the needles that are not kept (its file's key-value metadata), so that
    the metrics of a run built from it can name them (``changes_of``)."""
    changed = [r.row() for r in relocations if r.status != KEPT]
    return table.replace_schema_metadata({**(table.schema.metadata or {}), CHANGES_KEY: json.dumps(changed)})


def changes_of(schema: pa.Schema) -> list[dict]:
    """The needles an evaluation set's file says were not kept (``with_changes``); none for a file without them."""
    return json.loads((schema.metadata or {}).get(CHANGES_KEY, b"[]"))
