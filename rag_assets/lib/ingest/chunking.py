"""Chunking strategies: a canonical document to chunk records with honest offsets.

Six strategies from three independent ingredients (the reference study's), and the whole document,
each a partition of the ``chunks`` asset:

- A ``blind``: cut every ``target`` characters without looking at the text.
- B ``blind_overlap``: A, each chunk also carrying the last ``overlap`` characters of the one before.
- C ``boundaries``: never cut inside a paragraph; pack whole paragraphs up to the target; split a
  paragraph longer than the target at sentence ends (a line of code at its line end; a sentence
  longer than the target is cut at the target).
- D ``boundaries_overlap``: C plus the overlap.
- E ``boundaries_header``: C, the embedded text prefixed with ``[Document title > Section path]``
  and a newline.
- F ``boundaries_header_overlap``: E plus the overlap.
- ``document``: one chunk per document, its whole canonical text (for a BEIR document: the title,
  a blank line, the text), as MTEB and BEIR embed documents; the model's window truncates it.

C-F chunk each section separately (no chunk spans two sections; a heading is never content, and
the first chunk of a section carries no overlap). A and B cut the whole canonical text.

A chunk has two texts. ``content`` is this chunk's own words, quoted back to a user, and is
exactly ``canonical[start:end]``. ``text`` is what gets embedded: the header (E, F), then the
document text from ``span_start`` to ``end``, i.e. the overlap tail, the separator that follows it in
the document, and the content. ``span_start`` is ``max(prev.start, prev.end - overlap)`` for a chunk
with an overlap (exactly the last ``overlap`` characters of the previous chunk's content), else
``start``. A needle counts as retrieved when it lies whole in the chunk's ``content``
(``evalsets.judging``): neither the header nor the overlap tail ever counts.

Offsets are found in the document (regular-expression matches over the canonical text), never
accumulated from lengths, so a chunk can always be sliced back out of its document.

A strategy's size and overlap are in characters or in context tokens (``unit``; ``ingest.tokens``: the tokens
a quoted chunk costs in the budget). A strategy of another kind than ``ours`` is a team's splitter
(``ingest.splitters``). The built-in strategies are declared in ``STRATEGIES``; a strategies file adds entries
(``ingest.strategies``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from rag_assets.lib.ingest.canonical import Section
from rag_assets.lib.ingest.documents import sections_from_rows
from rag_assets.lib.ingest.tokens import token_count, token_starts

_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\n[ \t]*\n|\s*\Z)", re.DOTALL)
# A sentence ends at . ! or ? (with any closing quotes or brackets) before whitespace; a line of
# code, which has no such end, ends at its newline.
_SENTENCE = re.compile(r"\S.*?(?:[.!?][\"')\]\u2019\u201d]*(?=\s)|(?=\n)|\Z)", re.DOTALL)


DEFAULT_TARGET = 512
DEFAULT_OVERLAP = 64
CHARACTERS, TOKENS = "characters", "tokens"
OURS = "ours"  # this module's chunker; any other kind is a team's splitter (ingest.splitters)


@dataclass(frozen=True)
class Strategy:
    name: str
    target: int = DEFAULT_TARGET  # characters (or tokens: unit) of content per chunk, at most
    overlap: int = 0  # characters (or tokens) of the previous chunk's content carried in front of this one
    boundaries: bool = False  # pack whole paragraphs (sentences when a paragraph is too long)
    header: bool = False  # prefix the embedded text with "[Title > Section path]\n"
    whole: bool = False  # one chunk per document: its whole canonical text (the model's window truncates)
    unit: str = CHARACTERS  # what target and overlap count: characters, or context tokens (ingest.tokens)
    kind: str = OURS  # ours, or the library of a team's splitter (ingest.splitters.KINDS)
    splitter: str = ""  # the splitter's class (or, for the python kind, the callable's dotted path)
    options: tuple[tuple[str, str], ...] = ()  # the splitter's other keyword arguments: (name, JSON), sorted
    family: str = ""  # the entry a sweep expanded it from (the size view's line); its own name when none
    model: str = ""  # a semantic splitter's embedding model (a registry key; ingest.semantic)

    def __post_init__(self) -> None:
        splitter_default = self.kind != OURS and self.target == 0 and self.overlap == 0  # the splitter's own size
        if not splitter_default and (self.target <= 0 or not 0 <= self.overlap < self.target):
            raise ValueError(f"strategy {self.name!r}: need target > 0 and 0 <= overlap < target")
        if self.unit not in (CHARACTERS, TOKENS):
            raise ValueError(f"strategy {self.name!r}: unit is {CHARACTERS!r} or {TOKENS!r}, not {self.unit!r}")

    @property
    def line(self) -> str:
        """The family this strategy is a point of, in the size view."""
        return self.family or self.name

    def definition(self) -> str:
        """What this strategy's chunks depend on besides the chunking code, as text (its partition's version)."""
        return repr((self.target, self.overlap, self.boundaries, self.header, self.whole, self.unit, self.kind,
                     self.splitter, self.options)) + (f" model {self.model}" if self.model else "")


STRATEGIES: dict[str, Strategy] = {
    strategy.name: strategy
    for strategy in (
        Strategy("blind"),
        Strategy("blind_overlap", overlap=DEFAULT_OVERLAP),
        Strategy("boundaries", boundaries=True),
        Strategy("boundaries_overlap", boundaries=True, overlap=DEFAULT_OVERLAP),
        Strategy("boundaries_header", boundaries=True, header=True),
        Strategy("boundaries_header_overlap", boundaries=True, header=True, overlap=DEFAULT_OVERLAP),
        Strategy("document", whole=True),
    )
}
CHUNKER_VERSION = "1"  # bump when the chunking code changes what a strategy's chunks are


def chunking_code_version() -> str:
    """The version of the chunking logic: ``CHUNKER_VERSION`` and every built-in strategy's definition. A
    strategy of a strategies file (and a splitter's library version) is versioned per partition instead
    (``strategy_version``), so changing it marks only its own partitions stale."""
    definition = CHUNKER_VERSION + repr(sorted((name, s.definition()) for name, s in STRATEGIES.items()))
    return f"{CHUNKER_VERSION}-{hashlib.sha256(definition.encode('utf-8')).hexdigest()[:8]}"


def strategy_version(strategy: Strategy, library_version: str = "") -> str:
    """The version of one strategy's partition: its definition and its splitter library's version."""
    definition = f"{strategy.definition()}\x00{library_version}"
    return hashlib.sha256(definition.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    strategy: str
    section: str
    text: str
    content: str
    start: int  # the content's first character in the canonical text
    end: int  # one past the content's last character
    span_start: int

    def to_row(self) -> dict:
        return {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "strategy": self.strategy,
            "section": self.section,
            "text": self.text,
            "content": self.content,
            "start": self.start,
            "end": self.end,
            "span_start": self.span_start,
        }


def chunk_id(doc_id: str, strategy: str, start: int, end: int) -> str:
    key = f"{doc_id}\x00{strategy}\x00{start}\x00{end}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


def _pieces(text: str, pattern: re.Pattern[str], start: int, end: int) -> Iterator[tuple[int, int]]:
    for match in pattern.finditer(text, start, end):
        yield match.start(), match.end()


class Measure:
    """How long a stretch of a document is in a strategy's unit, where a stretch longer than the target is cut,
    and where the last ``overlap`` units of a chunk begin: characters, or context tokens (``ingest.tokens``;
    a cut always falls between tokens and between characters)."""

    def __init__(self, text: str, unit: str = CHARACTERS) -> None:
        self.text = text
        self.tokens = unit == TOKENS

    def length(self, start: int, end: int) -> int:
        return token_count(self.text[start:end]) if self.tokens else end - start

    def cut(self, start: int, end: int, target: int) -> int:
        """The end of the longest stretch from ``start`` (within ``end``) no longer than ``target``."""
        if not self.tokens:
            return min(start + target, end)
        starts = token_starts(self.text[start:end])
        return start + starts[min(target, len(starts) - 1)]

    def tail(self, start: int, end: int, overlap: int) -> int:
        """Where the last ``overlap`` units of ``text[start:end]`` begin."""
        if not self.tokens:
            return max(start, end - overlap)
        starts = token_starts(self.text[start:end])
        return start + starts[max(0, len(starts) - 1 - overlap)]


def fit_spans(text: str, start: int, end: int, target: int,
              measure: Measure | None = None) -> Iterator[tuple[int, int]]:
    """Spans of text[start:end] no longer than target: paragraphs, else sentences, else cuts."""
    measure = measure or Measure(text)
    for p_start, p_end in _pieces(text, _PARAGRAPH, start, end):
        if measure.length(p_start, p_end) <= target:
            yield p_start, p_end
            continue
        for s_start, s_end in _pieces(text, _SENTENCE, p_start, p_end):
            while measure.length(s_start, s_end) > target:  # a sentence longer than the target: cut it
                cut = measure.cut(s_start, s_end, target)
                yield s_start, cut
                s_start = cut
                while s_start < s_end and text[s_start].isspace():
                    s_start += 1
            if s_end > s_start:
                yield s_start, s_end


def pack_spans(spans: Sequence[tuple[int, int]], target: int,
               length: Callable[[int, int], int] | None = None) -> Iterator[tuple[int, int]]:
    """Greedy packing of consecutive spans into chunks whose extent stays within target."""
    length = length or (lambda start, end: end - start)
    current: tuple[int, int] | None = None
    for start, end in spans:
        if current is not None and length(current[0], end) <= target:
            current = (current[0], end)
            continue
        if current is not None:
            yield current
        current = (start, end)
    if current is not None:
        yield current


def section_at(sections: Sequence[Section], offset: int, title: str) -> str:
    path = title
    for section in sections:
        if section.start <= offset:
            path = section.path
        else:
            break
    return path


def header_text(section_path: str) -> str:
    """The header a strategy with ``header`` puts in front of the embedded text."""
    return f"[{section_path}]\n"


def _runs(text: str, sections: Sequence[Section], strategy: Strategy, title: str) -> list[list[tuple[int, int, str]]]:
    """Content spans in runs within which each chunk overlaps the one before (a section, for C-F)."""
    if strategy.whole:
        return [[(0, len(text), title)]] if text.strip() else [[]]
    measure = Measure(text, strategy.unit)
    if strategy.boundaries:
        return [
            [(start, end, section.path) for start, end in pack_spans(
                list(fit_spans(text, section.start, section.end, strategy.target, measure)), strategy.target,
                measure.length)]
            for section in sections
        ]
    ordered = sorted(sections, key=lambda s: s.start)
    if strategy.unit == TOKENS:
        starts = token_starts(text)
        cuts = [(starts[i], starts[min(i + strategy.target, len(starts) - 1)])
                for i in range(0, len(starts) - 1, strategy.target)]
    else:
        cuts = [(start, min(start + strategy.target, len(text))) for start in range(0, len(text), strategy.target)]
    return [[(start, end, section_at(ordered, start, title)) for start, end in cuts if text[start:end].strip()]]


def chunk_document(
    doc_id: str, title: str, text: str, sections: Sequence[Section], strategy: Strategy
) -> list[Chunk]:
    """The chunks of one document under one strategy, in document order."""
    chunks = []
    measure = Measure(text, strategy.unit)
    for run in _runs(text, sections, strategy, title):
        previous: tuple[int, int] | None = None
        for start, end, section_path in run:
            span_start = start
            if strategy.overlap and previous is not None:
                span_start = measure.tail(previous[0], previous[1], strategy.overlap)
            previous = (start, end)
            chunks.append(
                Chunk(
                    chunk_id=chunk_id(doc_id, strategy.name, start, end),
                    doc_id=doc_id,
                    strategy=strategy.name,
                    section=section_path,
                    text=(header_text(section_path) if strategy.header else "") + text[span_start:end],
                    content=text[start:end],
                    start=start,
                    end=end,
                    span_start=span_start,
                )
            )
    return chunks


def header_of_text(text: str, span_start: int, end: int) -> str:
    """The part of an embedded text that is not document text (empty without a header)."""
    return text[: len(text) - (end - span_start)]


def header_of(chunk: Chunk) -> str:
    return header_of_text(chunk.text, chunk.span_start, chunk.end)


def chunk_rows(documents: Iterable[Mapping], strategy: Strategy) -> list[dict]:
    """The chunk rows of every extracted document (rows of ``extracted_text``) that is not failed."""
    return [
        chunk.to_row() | {"snapshot_id": document["snapshot_id"], "extractor_version": document["extractor_version"]}
        for document in documents if document["status"] == "ok"
        for chunk in chunk_document(document["doc_id"], document["title"], document["text"],
                                    sections_from_rows(document["sections"]), strategy)
    ]


def character_stats(contents: Sequence[str]) -> dict:
    sizes = [len(content) for content in contents]
    return {
        "chunks": len(sizes),
        "mean_characters": sum(sizes) / len(sizes) if sizes else 0.0,
        "max_characters": max(sizes, default=0),
    }
