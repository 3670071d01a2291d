"""A team's real questions, read from where it keeps them, to be labelled into needles (``labelling.py``).

Sources: a text file (one question a line; blank lines and ``#`` comments skipped), a CSV file or a JSON
Lines file (the column or key ``field``, default ``question``), the project's own ``traces.duckdb`` (every
question ``ask`` was asked), or a table in the team's PostgreSQL (a URL and a query whose first column is
the question, e.g. the lesson's ``SELECT pregunta FROM rag_traza``). Questions are deduplicated on their
folded text (case and whitespace), in their first order; each gets a stable id from that folded text, so a
labelling session resumed on a grown log keeps its decisions.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

from rag_assets.lib.formats.jsonl import read_json_lines
from rag_assets.lib.ingest.folding import fold
from rag_assets.lib.store.team_database import TeamDatabaseError, is_postgres_url, query_rows

MAX_QUESTION_CHARS = 8_000  # as the evaluation set's


class QuestionsError(ValueError):
    """Questions that cannot be read: the message names the file (and line) or the database and query.
    ``in_the_input``: the fault is in what was given (a line, a column, a query), not in reaching it."""

    def __init__(self, message: str, in_the_input: bool = True) -> None:
        super().__init__(message)
        self.in_the_input = in_the_input


@dataclass(frozen=True)
class Question:
    id: str  # "q" + 12 hex digits of the folded text: the same question has the same id in every source
    text: str
    source: str  # where it was read: "file:line", "traces.duckdb", "postgresql"


def question_id(text: str) -> str:
    return "q" + hashlib.sha256(fold(text).lower().encode("utf-8")).hexdigest()[:12]


def deduplicated(found: list[tuple[str, str]]) -> list[Question]:
    """[(text, source)] as Questions, each folded text once, blank ones left out; a question longer than the
    evaluation takes (MAX_QUESTION_CHARS) is refused, naming where it was read."""
    seen, questions = set(), []
    for text, source in found:
        if text is not None and not isinstance(text, str):
            raise QuestionsError(f"{source}: the question is not text but {type(text).__name__} {str(text)[:40]!r}")
        text = " ".join((text or "").split())
        if len(text) > MAX_QUESTION_CHARS:
            raise QuestionsError(f"{source}: the question is {len(text):,} characters long; at most "
                                 f"{MAX_QUESTION_CHARS:,}, as the evaluation takes (shorten it, or leave it out)")
        if not text:
            continue
        key = question_id(text)
        if key not in seen:
            seen.add(key)
            questions.append(Question(key, text, source))
    return questions


def _text_lines(path: Path) -> list[tuple[str, str]]:
    return [(line, f"{path}:{number}") for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if line.strip() and not line.lstrip().startswith("#")]


def _csv_rows(path: Path, field: str) -> list[tuple[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if field not in (reader.fieldnames or []):
            raise QuestionsError(f"{path}: no column {field!r} (its columns: {', '.join(reader.fieldnames or [])}); "
                                 "name the question's column with --field")
        return [(row[field], f"{path}:{number}") for number, row in enumerate(reader, 2)]


def _json_lines(path: Path, field: str) -> list[tuple[str, str]]:
    found = []
    for where, record, problem in read_json_lines(path):
        if problem:
            raise QuestionsError(problem)
        if field not in record:
            raise QuestionsError(f"{where}: no key {field!r}; name the question's key with --field")
        found.append((record[field], where))
    return found


def from_traces(path: Path) -> list[tuple[str, str]]:
    """Every question ``ask`` recorded in ``traces.duckdb``, oldest first."""
    import duckdb

    try:
        with duckdb.connect(str(path), read_only=True) as connection:
            rows = connection.sql("SELECT question FROM ask_traces ORDER BY asked_at").fetchall()
    except duckdb.Error as error:
        raise QuestionsError(f"{path}: the traces cannot be read ({str(error).splitlines()[0]})",
                             in_the_input=False) from None
    return [(question, f"{path.name}, trace {number}") for number, (question,) in enumerate(rows, 1)]


def from_postgres(url: str, query: str) -> list[tuple[str, str]]:
    """The first column of every row ``query`` returns from the PostgreSQL database at ``url``."""
    try:
        _, rows = query_rows(url, query)
    except TeamDatabaseError as error:
        raise QuestionsError(str(error), in_the_input=False) from None
    return [(row[0], f"postgresql, row {number} of the query") for number, row in enumerate(rows, 1)]


def read_questions(source: str, field: str = "question", query: str = "") -> list[Question]:
    """The deduplicated questions of ``source``: a PostgreSQL URL (with ``query``), a ``.duckdb`` file of
    traces, a ``.csv``, a ``.jsonl``/``.json`` file, or any other text file (one question a line)."""
    if is_postgres_url(source):
        if not query:
            raise QuestionsError("a PostgreSQL source needs --query (its first column is the question)")
        return deduplicated(from_postgres(source, query))
    path = Path(source)
    if not path.is_file():
        raise QuestionsError(f"questions file {path} does not exist")
    try:
        if path.suffix == ".duckdb":
            return deduplicated(from_traces(path))
        if path.suffix == ".csv":
            return deduplicated(_csv_rows(path, field))
        if path.suffix in (".jsonl", ".json"):
            return deduplicated(_json_lines(path, field))
        return deduplicated(_text_lines(path))
    except UnicodeDecodeError as error:
        raise QuestionsError(f"{path}: not UTF-8 (byte {error.start})") from None
