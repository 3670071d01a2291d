"""Evaluation sets of needle questions.

A needle is a short verbatim sentence of the corpus that occurs exactly once (whitespace folded)
and is never a heading. Judgements are spans, never chunk ids: a retrieved chunk is correct when
the needle lies whole inside the document text it embeds, ``canonical[span_from:to]`` (whitespace
folded); a header the chunker copied never counts. One evaluation set thus serves every
chunking strategy.

File format: JSON Lines, one object per needle::

    {"id": "n01", "doc_id": "tutorial/controlflow.html", "needle": "...",
     "questions": {"doc": "...", "ticket": "..."}}

``questions`` maps a phrasing name to the question asked in that phrasing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from rag_assets.lib.extraction import fold_whitespace


class EvalSetError(ValueError):
    """The evaluation set is malformed or does not fit the corpus; the message says where."""


@dataclass(frozen=True)
class Needle:
    id: str
    doc_id: str
    needle: str
    questions: Mapping[str, str]


@dataclass(frozen=True)
class Query:
    query_id: str  # "<needle id>:<phrasing>"
    needle_id: str
    phrasing: str
    text: str


def load_needles(path: Path) -> list[Needle]:
    """Parse a needle file; a malformed line raises EvalSetError naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise EvalSetError(f"evaluation set {path} does not exist")
    needles = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise EvalSetError(f"{where}: not valid JSON ({error.msg})") from error
        if not isinstance(record, dict):
            raise EvalSetError(f"{where}: expected a JSON object")
        missing = [key for key in ("id", "doc_id", "needle", "questions") if key not in record]
        if missing:
            raise EvalSetError(f"{where}: missing {', '.join(missing)}")
        questions = record["questions"]
        if not isinstance(questions, dict) or not all(
            isinstance(q, str) and q.strip() for q in questions.values()
        ) or not questions:
            raise EvalSetError(f"{where}: 'questions' must map phrasings to non-empty questions")
        needles.append(
            Needle(
                id=str(record["id"]),
                doc_id=str(record["doc_id"]),
                needle=str(record["needle"]),
                questions=dict(questions),
            )
        )
    if not needles:
        raise EvalSetError(f"evaluation set {path} holds no needle")
    return needles


def needle_problems(
    needles: Iterable[Needle], documents: Mapping[str, str], headings: Mapping[str, Iterable[str]]
) -> list[str]:
    """Every way the set does not fit the corpus, one line per offending needle id.

    ``documents`` maps doc id to canonical text; ``headings`` maps doc id to its heading texts.
    """
    folded_docs = {doc_id: fold_whitespace(text) for doc_id, text in documents.items()}
    folded_headings = {
        doc_id: {fold_whitespace(h) for h in texts} for doc_id, texts in headings.items()
    }
    problems, seen = [], set()
    for needle in needles:
        if needle.id in seen:
            problems.append(f"{needle.id}: duplicate id")
        seen.add(needle.id)
        folded = fold_whitespace(needle.needle)
        if not folded:
            problems.append(f"{needle.id}: empty needle")
            continue
        total = sum(text.count(folded) for text in folded_docs.values())
        if total != 1:
            problems.append(f"{needle.id}: occurs {total} times in the corpus, must occur exactly once")
        elif folded_docs.get(needle.doc_id, "").count(folded) != 1:
            problems.append(f"{needle.id}: not in its document {needle.doc_id!r}")
        if any(folded in h for h in folded_headings.get(needle.doc_id, ())):
            problems.append(f"{needle.id}: is (inside) a heading")
    return problems


def expand_queries(needles: Iterable[Needle]) -> list[Query]:
    return [
        Query(query_id=f"{n.id}:{phrasing}", needle_id=n.id, phrasing=phrasing, text=question)
        for n in needles
        for phrasing, question in sorted(n.questions.items())
    ]


def holds_needle(canonical: str, span_from: int, end: int, needle: str) -> bool:
    """True when the document text a chunk embeds contains the whole needle, whitespace folded."""
    return fold_whitespace(needle) in fold_whitespace(canonical[span_from:end])


def needle_holders(
    needles: Iterable[Needle], chunks: Iterable[Mapping], documents: Mapping[str, str]
) -> dict[str, set[str]]:
    """For each needle id, the ids of the chunks whose document span holds it whole.

    ``chunks`` are chunk rows with ``chunk_id``, ``doc_id``, ``span_from`` and ``to``.
    """
    by_doc: dict[str, list[Mapping]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk["doc_id"], []).append(chunk)
    holders = {}
    for needle in needles:
        canonical = documents.get(needle.doc_id, "")
        holders[needle.id] = {
            chunk["chunk_id"]
            for chunk in by_doc.get(needle.doc_id, ())
            if holds_needle(canonical, chunk["span_from"], chunk["to"], needle.needle)
        }
    return holders
