"""Evaluation sets: needle questions, out-of-domain queries, and document-level judgements.

A needle is a short verbatim sentence of the corpus that occurs exactly once (whitespace folded)
and is never a heading. Judgements are spans, never chunk ids: a retrieved chunk is correct when
the needle lies whole inside the document text it embeds, ``canonical[span_start:end]`` (whitespace
folded); a header the chunker copied never counts. One evaluation set thus serves every
chunking strategy.

Needle file format: JSON Lines, one object per needle::

    {"id": "n01", "doc_id": "tutorial/controlflow.html", "needle": "...",
     "questions": {"doc": "...", "ticket": "..."}, "kind": "prose"}

``questions`` maps a phrasing name to the question asked in that phrasing: ``doc`` in the
documentation's own words, ``ticket`` as a user's support ticket would put it. ``kind`` (optional)
says what the needle is: ``prose``, ``code-adjacent`` or ``table-row``.

Out-of-domain file format: JSON Lines ``{"id": "o01", "query": "...", "kind": "near"}`` with kind
``near`` (a question a user of the corpus asks that it does not answer) or ``off_topic``. These
queries have no right answer; they calibrate the distance at which a retriever should say no.

Every query becomes one row of the evaluation set with its ``query_kind``: ``needle`` (judged by
spans), ``document`` (judged by relevant documents, as in BEIR) or ``out_of_domain``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from rag_assets.lib.canonical import fold_whitespace
from rag_assets.lib.jsonl import read_json_lines

NEEDLE, DOCUMENT, OUT_OF_DOMAIN = "needle", "document", "out_of_domain"


class EvalSetError(ValueError):
    """The evaluation set is malformed or does not fit the corpus; the message says where."""


@dataclass(frozen=True)
class Needle:
    id: str
    doc_id: str
    needle: str
    questions: Mapping[str, str]
    kind: str = "prose"


@dataclass(frozen=True)
class OutOfDomainQuery:
    id: str
    query: str
    kind: str  # "near" or "off_topic"


@dataclass(frozen=True)
class Query:
    query_id: str  # "<needle id>:<phrasing>" for needles
    needle_id: str | None
    phrasing: str
    text: str
    query_kind: str = NEEDLE
    spans: tuple[tuple[str, str], ...] = ()  # (doc_id, needle) pairs, any of which answers the query
    relevant_doc_ids: tuple[str, ...] = field(default=())


def json_lines(path: Path, what: str) -> Iterator[tuple[str, dict]]:
    """(``file:line``, object) for every line; a malformed line raises EvalSetError naming file and line."""
    path = Path(path)
    if not path.is_file():
        raise EvalSetError(f"{what} {path} does not exist")
    try:
        for where, record, problem in read_json_lines(path):
            if problem:
                raise EvalSetError(problem)
            yield where, record
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise EvalSetError(f"{path}: cannot be read ({error})") from error


def load_needles(path: Path) -> list[Needle]:
    """Parse a needle file; a malformed line raises EvalSetError naming the file and line."""
    needles = []
    for where, record in json_lines(path, "evaluation set"):
        missing = [key for key in ("id", "doc_id", "needle", "questions") if key not in record]
        if missing:
            raise EvalSetError(f"{where}: missing {', '.join(missing)}")
        questions = record["questions"]
        if not isinstance(questions, dict) or not questions:
            raise EvalSetError(f"{where}: 'questions' must map phrasings to questions")
        needles.append(
            Needle(id=str(record["id"]), doc_id=str(record["doc_id"]), needle=str(record["needle"]),
                   questions={str(k): str(v) if v is not None else "" for k, v in questions.items()},
                   kind=str(record.get("kind", "prose")))
        )
    if not needles:
        raise EvalSetError(f"evaluation set {path} holds no needle")
    return needles


def load_out_of_domain(path: Path) -> list[OutOfDomainQuery]:
    queries = []
    for where, record in json_lines(path, "out-of-domain set"):
        if not isinstance(record.get("id"), str) or not isinstance(record.get("query"), str):
            raise EvalSetError(f"{where}: needs string 'id' and 'query'")
        kind = record.get("kind", "near")
        if kind not in ("near", "off_topic"):
            raise EvalSetError(f"{where}: kind must be 'near' or 'off_topic', not {kind!r}")
        queries.append(OutOfDomainQuery(id=record["id"], query=record["query"], kind=kind))
    return queries


def set_version(needle_file: Path) -> str:
    """The version declared by the newest entry (``## <version>``) of CHANGELOG.md beside the set."""
    changelog = Path(needle_file).parent / "CHANGELOG.md"
    if changelog.is_file():
        match = re.search(r"^## +(\S+)", changelog.read_text(encoding="utf-8"), re.MULTILINE)
        if match:
            return match.group(1)
    return "unversioned"


def content_hash(paths: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes() + b"\x00")
    return digest.hexdigest()[:16]


# Validation: each function returns one line per offending id, saying why.

def occurrence_problems(needles: Iterable[Needle], documents: Mapping[str, str]) -> list[str]:
    """Each needle must occur exactly once in the corpus (whitespace folded), in its own document."""
    folded_docs = {doc_id: fold_whitespace(text) for doc_id, text in documents.items()}
    problems = []
    for needle in needles:
        folded = fold_whitespace(needle.needle)
        if not folded:
            problems.append(f"{needle.id}: empty needle")
            continue
        total = sum(text.count(folded) for text in folded_docs.values())
        if total != 1:
            problems.append(f"{needle.id}: occurs {total} times in the corpus, must occur exactly once")
        elif folded_docs.get(needle.doc_id, "").count(folded) != 1:
            problems.append(f"{needle.id}: not in its document {needle.doc_id!r}")
    return problems


def heading_problems(needles: Iterable[Needle], headings: Mapping[str, Iterable[str]]) -> list[str]:
    """No needle may be a heading or lie inside one."""
    folded = {doc_id: [fold_whitespace(h) for h in texts] for doc_id, texts in headings.items()}
    return [
        f"{needle.id}: is (inside) a heading"
        for needle in needles
        if fold_whitespace(needle.needle) and any(fold_whitespace(needle.needle) in h for h in folded.get(needle.doc_id, ()))
    ]


def duplicate_id_problems(ids: Iterable[str]) -> list[str]:
    seen, problems = set(), []
    for query_id in ids:
        if query_id in seen:
            problems.append(f"{query_id}: duplicate id")
        seen.add(query_id)
    return problems


def phrasing_problems(needles: Sequence[Needle], required: Sequence[str] = ("doc", "ticket")) -> list[str]:
    """Every needle carries every required phrasing, non-empty, and no question copies its needle."""
    problems = []
    for needle in needles:
        for phrasing in required:
            question = needle.questions.get(phrasing, "")
            if not question.strip():
                problems.append(f"{needle.id}: no {phrasing!r} question")
            elif fold_whitespace(needle.needle).lower() in fold_whitespace(question).lower():
                problems.append(f"{needle.id}: the {phrasing!r} question copies the needle")
    return problems


def expand_queries(needles: Iterable[Needle], out_of_domain: Iterable[OutOfDomainQuery] = ()) -> list[Query]:
    """One query per needle and phrasing, then one per out-of-domain query."""
    queries = [
        Query(query_id=f"{n.id}:{phrasing}", needle_id=n.id, phrasing=phrasing, text=question,
              spans=((n.doc_id, n.needle),), relevant_doc_ids=(n.doc_id,))
        for n in needles
        for phrasing, question in sorted(n.questions.items())
    ]
    queries += [
        Query(query_id=o.id, needle_id=None, phrasing=OUT_OF_DOMAIN, text=o.query, query_kind=OUT_OF_DOMAIN)
        for o in out_of_domain
    ]
    return queries


def holds_needle(canonical: str, span_start: int, end: int, needle: str) -> bool:
    """True when the document text a chunk embeds contains the whole needle, whitespace folded."""
    return fold_whitespace(needle) in fold_whitespace(canonical[span_start:end])


def chunks_by_document(chunks: Iterable[Mapping]) -> dict[str, list[Mapping]]:
    by_doc: dict[str, list[Mapping]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk["doc_id"], []).append(chunk)
    return by_doc


def span_holders(
    spans: Iterable[tuple[str, str]], by_doc: Mapping[str, list[Mapping]], documents: Mapping[str, str]
) -> set[str]:
    """Ids of the chunks whose document span holds whole at least one of the (doc_id, text) spans.

    Chunks are rows with ``chunk_id``, ``doc_id``, ``span_start`` and ``end``.
    """
    holders = set()
    for doc_id, text in spans:
        canonical = documents.get(doc_id, "")
        holders.update(
            chunk["chunk_id"] for chunk in by_doc.get(doc_id, ())
            if holds_needle(canonical, chunk["span_start"], chunk["end"], text)
        )
    return holders


def needle_holders(
    needles: Iterable[Needle], chunks: Iterable[Mapping], documents: Mapping[str, str]
) -> dict[str, set[str]]:
    """For each needle id, the ids of the chunks whose document span holds it whole."""
    by_doc = chunks_by_document(chunks)
    return {needle.id: span_holders([(needle.doc_id, needle.needle)], by_doc, documents) for needle in needles}


NEEDLE_SET, BEIR = "needle_set", "beir"


def query_rows(
    queries: Iterable[Query], kinds: Mapping[str, str], version: str, digest: str, source: str = NEEDLE_SET
) -> list[dict]:
    """The evaluation set as flat rows, one per query; ``source`` says which format it came from."""
    return [
        {
            "query_id": q.query_id,
            "source": source if q.query_kind != OUT_OF_DOMAIN else NEEDLE_SET,
            "needle_id": q.needle_id,
            "phrasing": q.phrasing,
            "question": q.text,
            "query_kind": q.query_kind,
            "kind": kinds.get(q.needle_id or q.query_id),
            "spans": [{"doc_id": doc_id, "text": text} for doc_id, text in q.spans],
            "relevant_doc_ids": list(q.relevant_doc_ids),
            "eval_version": version,
            "eval_hash": digest,
        }
        for q in queries
    ]


def queries_from_rows(rows: Iterable[Mapping]) -> list[Query]:
    return [
        Query(query_id=r["query_id"], needle_id=r["needle_id"], phrasing=r["phrasing"], text=r["question"],
              query_kind=r["query_kind"], spans=tuple((s["doc_id"], s["text"]) for s in r["spans"]),
              relevant_doc_ids=tuple(r["relevant_doc_ids"]))
        for r in rows
    ]


def needles_from_rows(rows: Iterable[Mapping], source: str | None = None) -> list[Needle]:
    """The needles behind the needle rows of an evaluation set (of one source), in first-seen order.

    A query answered by any of several spans (BEIR evidence) gives one needle per span,
    ``<needle id>#<n>``.
    """
    needles: dict[str, Needle] = {}
    for row in rows:
        if row["query_kind"] != NEEDLE or (source and row.get("source", NEEDLE_SET) != source):
            continue
        spans = row["spans"]
        for index, span in enumerate(spans):
            needle_id = row["needle_id"] if len(spans) == 1 else f"{row['needle_id']}#{index}"
            needle = needles.setdefault(
                needle_id, Needle(needle_id, span["doc_id"], span["text"], {}, row.get("kind") or "prose"))
            needle.questions[row["phrasing"]] = row["question"]  # type: ignore[index]
    return list(needles.values())
