"""The checks an evaluation set must pass against the corpus it is used on (the eval_set asset's
blocking checks): every needle occurs exactly once, in its own document, and is not a heading; ids
are unique; every needle carries every phrasing and no question copies its needle.

Each function returns one line per offending id, saying why.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from rag_assets.lib.evalsets.queries import (
    NEEDLE_SET,
    OUT_OF_DOMAIN,
    Needle,
    needles_from_rows,
)
from rag_assets.lib.ingest.documents import canonical_texts
from rag_assets.lib.ingest.folding import fold


def occurrences(folded_needle: str, doc_id: str, folded_docs: Mapping[str, str]) -> tuple[int, int]:
    """(how often a folded needle occurs in the folded corpus, how often in its own document): the rule is
    once and once. Shared with the review of a needle file being written (``mining.review``)."""
    return (sum(text.count(folded_needle) for text in folded_docs.values()),
            folded_docs.get(doc_id, "").count(folded_needle))


def in_a_heading(folded_needle: str, folded_headings: Iterable[str]) -> bool:
    """Whether a folded needle is one of the folded headings of its document, or lies inside one."""
    return bool(folded_needle) and any(folded_needle in heading for heading in folded_headings)


def occurrence_problems(needles: Iterable[Needle], documents: Mapping[str, str]) -> list[str]:
    """Each needle must occur exactly once in the corpus (both folded: ``folding.fold``), in its own document."""
    folded_docs = {doc_id: fold(text) for doc_id, text in documents.items()}
    problems = []
    for needle in needles:
        folded = fold(needle.needle)
        if not folded:
            problems.append(f"{needle.id}: empty needle")
            continue
        total, own = occurrences(folded, needle.doc_id, folded_docs)
        if total != 1:
            problems.append(f"{needle.id}: occurs {total} times in the corpus, must occur exactly once")
        elif own != 1:
            problems.append(f"{needle.id}: not in its document {needle.doc_id!r}")
    return problems


def heading_problems(needles: Iterable[Needle], headings: Mapping[str, Iterable[str]]) -> list[str]:
    """No needle may be a heading or lie inside one."""
    folded = {doc_id: [fold(h) for h in texts] for doc_id, texts in headings.items()}
    return [f"{needle.id}: is (inside) a heading" for needle in needles
            if in_a_heading(fold(needle.needle), folded.get(needle.doc_id, ()))]


def duplicate_id_problems(ids: Iterable[str]) -> list[str]:
    seen, problems = set(), []
    for query_id in ids:
        if query_id in seen:
            problems.append(f"{query_id}: duplicate id")
        seen.add(query_id)
    return problems


def phrasing_problems(needles: Sequence[Needle], required: Sequence[str] = ("doc", "ticket")) -> list[str]:
    """Every needle carries every required phrasing, non-empty, and no question copies its needle. A labelled
    needle (``origin: labelled``) requires its real question, the ``ticket`` phrasing; others it has are kept."""
    problems = []
    for needle in needles:
        for phrasing in (("ticket",) if needle.origin == "labelled" else required):
            question = needle.questions.get(phrasing, "")
            if not question.strip():
                problems.append(f"{needle.id}: no {phrasing!r} question")
            elif fold(needle.needle).lower() in fold(question).lower():
                problems.append(f"{needle.id}: the {phrasing!r} question copies the needle")
    return problems


def headings_by_document(extracted_rows: list[dict]) -> dict[str, list[str]]:
    """The headings of each extracted document (failed ones have none)."""
    return {row["doc_id"]: [s["heading"] for s in row["sections"] if s["heading"]]
            for row in extracted_rows if row["status"] == "ok"}


def rejection_problems(rows: list[dict], extracted_rows: list[dict], phrasings: Sequence[str],
                       out_of_domain_configured: bool) -> list[str]:
    """Every reason the evaluation set's blocking checks would reject it against this extracted text,
    one line each naming the id at fault; found before the set is written, so a rejected set never
    replaces the last good one."""
    needles = needles_from_rows(rows)
    problems = occurrence_problems(needles, canonical_texts(extracted_rows))
    problems += heading_problems(needles, headings_by_document(extracted_rows))
    problems += duplicate_id_problems(row["query_id"] for row in rows)
    problems += phrasing_problems(needles_from_rows(rows, NEEDLE_SET), phrasings)
    if out_of_domain_configured and not any(row["query_kind"] == OUT_OF_DOMAIN for row in rows):
        problems.append("no out-of-domain queries in the configured out-of-domain file")
    return problems
