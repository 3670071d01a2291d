"""Chunking strategies: a canonical document to chunk records with honest offsets.

A chunk has two texts. ``content`` is this chunk's own words, quoted back to a user, and is
exactly ``canonical[from:to]``. ``text`` is what gets embedded: the contextual header (for header
strategies), then the content. ``span_from`` is where the document text that the chunk embeds
begins; it equals ``from`` for every strategy here (none carries an overlap yet).

Offsets are found in the document (regular-expression matches over the canonical text), never
accumulated from lengths, so a chunk can always be sliced back out of its document.

Strategies are declared in ``STRATEGIES``; adding one is one entry there.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Iterator, Sequence

from rag_assets.lib.extraction import Section

_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\n[ \t]*\n|\s*\Z)", re.DOTALL)
# A sentence ends at . ! or ? (with any closing quotes or brackets) before whitespace; a line of
# code, which has no such end, ends at its newline.
_SENTENCE = re.compile(r"\S.*?(?:[.!?][\"')\]\u2019\u201d]*(?=\s)|(?=\n)|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Strategy:
    name: str
    target: int = 512  # characters of content per chunk, at most
    boundaries: bool = False  # pack whole paragraphs (sentences when a paragraph is too long)
    header: bool = False  # prefix the embedded text with "[Title > Section path]\n"


STRATEGIES: dict[str, Strategy] = {
    strategy.name: strategy
    for strategy in (
        Strategy("blind"),
        Strategy("boundaries_header", boundaries=True, header=True),
    )
}


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    strategy: str
    section: str
    text: str
    content: str
    start: int  # "from"
    end: int  # "to"
    span_from: int

    def to_row(self) -> dict:
        return {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "strategy": self.strategy,
            "section": self.section,
            "text": self.text,
            "content": self.content,
            "from": self.start,
            "to": self.end,
            "span_from": self.span_from,
        }


def chunk_id(doc_id: str, strategy: str, start: int, end: int) -> str:
    key = f"{doc_id}\x00{strategy}\x00{start}\x00{end}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


def _pieces(text: str, pattern: re.Pattern[str], start: int, end: int) -> Iterator[tuple[int, int]]:
    for match in pattern.finditer(text, start, end):
        yield match.start(), match.end()


def _fit(text: str, start: int, end: int, target: int) -> Iterator[tuple[int, int]]:
    """Spans of text[start:end] no longer than target: paragraphs, else sentences, else cuts."""
    for p_start, p_end in _pieces(text, _PARAGRAPH, start, end):
        if p_end - p_start <= target:
            yield p_start, p_end
            continue
        for s_start, s_end in _pieces(text, _SENTENCE, p_start, p_end):
            while s_end - s_start > target:  # a sentence longer than the target: cut it
                cut = s_start + target
                yield s_start, cut
                s_start = cut
                while s_start < s_end and text[s_start].isspace():
                    s_start += 1
            if s_end > s_start:
                yield s_start, s_end


def _pack(spans: Sequence[tuple[int, int]], target: int) -> Iterator[tuple[int, int]]:
    """Greedy packing of consecutive spans into chunks whose extent stays within target."""
    current: tuple[int, int] | None = None
    for start, end in spans:
        if current is not None and end - current[0] <= target:
            current = (current[0], end)
            continue
        if current is not None:
            yield current
        current = (start, end)
    if current is not None:
        yield current


def _section_at(sections: Sequence[Section], offset: int, title: str) -> str:
    path = title
    for section in sections:
        if section.start <= offset:
            path = section.path
        else:
            break
    return path


def chunk_document(
    doc_id: str, title: str, text: str, sections: Sequence[Section], strategy: Strategy
) -> list[Chunk]:
    """The chunks of one document under one strategy, in document order."""
    spans: list[tuple[int, int, str]] = []
    if strategy.boundaries:
        for section in sections:
            for start, end in _pack(list(_fit(text, section.start, section.end, strategy.target)), strategy.target):
                spans.append((start, end, section.path))
    else:
        ordered = sorted(sections, key=lambda s: s.start)
        for start in range(0, len(text), strategy.target):
            end = min(start + strategy.target, len(text))
            if text[start:end].strip():
                spans.append((start, end, _section_at(ordered, start, title)))
    chunks = []
    for start, end, section_path in spans:
        content = text[start:end]
        header = f"[{section_path}]\n" if strategy.header else ""
        chunks.append(
            Chunk(
                chunk_id=chunk_id(doc_id, strategy.name, start, end),
                doc_id=doc_id,
                strategy=strategy.name,
                section=section_path,
                text=header + content,
                content=content,
                start=start,
                end=end,
                span_from=start,
            )
        )
    return chunks
