"""Evaluation sets: needle questions, out-of-domain queries, and document-level judgements.

A needle is a short verbatim sentence of the corpus that occurs exactly once (whitespace folded)
and is never a heading. Judgements are spans, never chunk ids: a retrieved chunk is correct when
the needle lies whole inside its own ``content``, ``canonical[start:end]`` (whitespace folded);
a header the chunker copied or an overlap tail never counts. One evaluation set thus serves every
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
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from rag_assets.lib.formats.jsonl import read_json_lines

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
    origin: str = "written"  # "labelled": a team's real question picked its sentence (``labelling.py``)


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


# what one line of an evaluation file may hold (docs/evaluation-sets.md): refused with its line number
MAX_QUESTION_CHARS = 8_000  # a question or query (longer BEIR queries are whole arguments, ~5,000)
MAX_NEEDLE_CHARS = 2_000  # a needle is a short verbatim sentence
MAX_LINE_CHARS = 256 * 1024  # a whole line, read no further than this


def too_long(text: str, limit: int, what: str) -> str | None:
    """Why ``text`` is refused for its length, or None."""
    return f"{what} is {len(text):,} characters long; at most {limit:,}" if len(text) > limit else None


def json_lines(path: Path, what: str) -> Iterator[tuple[str, dict]]:
    """(``file:line``, object) for every line; a malformed line (or one over MAX_LINE_CHARS) raises
    EvalSetError naming file and line."""
    path = Path(path)
    if not path.is_file():
        raise EvalSetError(f"{what} {path} does not exist")
    try:
        for where, record, problem in read_json_lines(path, max_line_chars=MAX_LINE_CHARS):
            if problem:
                raise EvalSetError(problem)
            yield where, record
    except (OSError, EOFError, UnicodeDecodeError) as error:
        raise EvalSetError(f"{path}: cannot be read ({error})") from error


def needle_of(where: str, record: Mapping) -> Needle:
    """One line of a needle file as a Needle; EvalSetError naming ``where`` and the field at fault (a missing
    one, one of the wrong kind, a text over its bound). ``evaluate`` and ``needles check`` read a line alike."""
    missing = [key for key in ("id", "doc_id", "needle", "questions") if key not in record]
    if missing:
        raise EvalSetError(f"{where}: missing {', '.join(missing)}")
    wrong = [f"{key!r} is empty" if isinstance(record[key], str) else
             f"{key!r} must be a non-empty string, not {json_text(record[key])}" for key in ("id", "doc_id", "needle")
             if not isinstance(record[key], str) or not record[key].strip()]
    wrong += [f"{key!r} must be a string, not {json_text(record[key])}" for key in ("kind", "origin")
              if key in record and not isinstance(record[key], str)]
    wrong += history_problems(where, record)
    if wrong:
        raise EvalSetError(f"{where}: " + "; ".join(w.removeprefix(f"{where}: ") for w in wrong))
    questions = record["questions"]
    if not isinstance(questions, dict) or not questions:
        raise EvalSetError(f"{where}: 'questions' must map phrasings to questions (an object such as "
                           f"{{\"doc\": \"...\", \"ticket\": \"...\"}}), not {json_text(questions)}")
    not_text = [phrasing for phrasing, text in questions.items() if text is not None and not isinstance(text, str)]
    if not_text:
        raise EvalSetError(f"{where}: the {', '.join(map(repr, not_text))} question must be a string (or null "
                           f"while it is a draft), not {json_text(questions[not_text[0]])}")
    sizes = [too_long(record["needle"], MAX_NEEDLE_CHARS, "the needle")] + [
        too_long(text or "", MAX_QUESTION_CHARS, f"the {phrasing!r} question") for phrasing, text in questions.items()]
    if any(sizes):
        raise EvalSetError(f"{where}: " + "; ".join(size for size in sizes if size))
    return Needle(id=record["id"], doc_id=record["doc_id"], needle=record["needle"],
                  questions={str(k): v or "" for k, v in questions.items()},
                  kind=record.get("kind", "prose"), origin=record.get("origin", "written"))


HISTORY_FIELDS = ("needle", "doc_id", "status", "snapshot", "decision")  # a needle's earlier versions (``repair``)


def history_problems(where: str, record: Mapping) -> list[str]:
    """Why a needle line's ``previous`` (its history) is malformed: a list of objects with string fields."""
    previous = record.get("previous")
    if previous is None:
        return []
    if not isinstance(previous, list):
        return [f"{where}: 'previous' must be a list of earlier versions, not {json_text(previous)}"]
    problems = []
    for index, entry in enumerate(previous):
        if not isinstance(entry, dict):
            problems.append(f"{where}: previous[{index}] must be an object, not {json_text(entry)}")
            continue
        for name in HISTORY_FIELDS:
            if name in entry and not isinstance(entry[name], str):
                problems.append(f"{where}: previous[{index}].{name} must be a string, not {json_text(entry[name])}")
        if not isinstance(entry.get("needle"), str):
            problems.append(f"{where}: previous[{index}] has no 'needle' (the text it was)")
    return problems



def json_text(value) -> str:
    """A JSON value as a message shows it: its kind and, when short, itself."""
    shown = json.dumps(value, ensure_ascii=False)
    kind = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")
    return kind if kind == "null" or len(shown) > 40 else f"{kind} ({shown})"


def load_needles(path: Path) -> list[Needle]:
    """Parse a needle file; a malformed line raises EvalSetError naming the file, line and field."""
    needles = [needle_of(where, record) for where, record in json_lines(path, "evaluation set")]
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
        size = too_long(record["query"], MAX_QUESTION_CHARS, "the query")
        if size:
            raise EvalSetError(f"{where}: {size}")
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


NEEDLE_SET, BEIR = "needle_set", "beir"


def query_rows(
    queries: Iterable[Query], kinds: Mapping[str, str], version: str, digest: str, source: str = NEEDLE_SET,
    labelled: frozenset[str] = frozenset(),
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
            "labelled": q.needle_id in labelled,
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
                needle_id, Needle(needle_id, span["doc_id"], span["text"], {}, row.get("kind") or "prose",
                                  "labelled" if row.get("labelled") else "written"))
            needle.questions[row["phrasing"]] = row["question"]  # type: ignore[index]
    return list(needles.values())
