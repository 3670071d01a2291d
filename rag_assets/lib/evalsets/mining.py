"""Needle candidates mined from the corpus, and the check of a needle file a person is writing.

``candidates`` proposes prose sentences of the extracted text that can serve as needles: not a heading,
code, a table row or a list of names; between 8 and 40 words with at least 4 content words; occurring
exactly once in the corpus (whitespace folded); and, when an embedder is given, whose meaning is said by
no other sentence of the corpus (cosine to every other sentence below ``max_similarity``), so the
needle is the only answer. They are spread over documents and sections (round robin, at most
``per_document`` each). Each carries its document, section, ``#char=`` locator and empty ``doc`` and
``ticket`` phrasings for a person to write.

``review`` runs every check the evaluation set's blocking checks run, by line number, plus the
phrasing rule (a question must not share more than ``max_shared_words`` consecutive words with its
needle) and the corpus's coverage (documents and sections without a needle); empty phrasings make a
draft, reported as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from rag_assets.lib.evalsets.checks import in_a_heading, occurrences
from rag_assets.lib.ingest.folding import find_folded, fold

# a sentence ends at . ! ? (and Arabic's question mark) before a space, or at a CJK full stop wherever it is
_SENTENCE = re.compile(r"[^.!?。！？؟]+(?:[.!?؟](?=\s|$)|[。！？])")
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['-])+")  # a word of letters in any script
# scripts written without spaces between words: a sentence is measured in characters
UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")
MIN_CHARACTERS, MAX_CHARACTERS = 12, 120
STOPWORDS = frozenset("""a an the and or but if then of to in on at by for with from as is are was were be been
being it its this that these those you your we our they their he she his her i me my not no do does did can
could will would should may might must so than too very just also into out up down over under about which
what when where who how why all any each some such there here""".split())
MIN_WORDS, MAX_WORDS, MIN_CONTENT_WORDS = 8, 40, 4
# A sentence that leans on its context ("This means ...") or points elsewhere ("see the next section")
# is a poor needle: its question cannot be asked without the page around it.
LEANS_ON_CONTEXT = frozenset("this these that those it its they them such here there so also then thus "
                             "hence however but and or now still instead otherwise likewise similarly".split())
POINTS_ELSEWHERE = re.compile(r"\b(see|section|chapter|tutorial|below|above|following|next|previous|later|"
                              r"earlier|example|examples|discussed|described|mentioned|covered|introduced)\b", re.I)
NARRATES = re.compile(r"\b(we|we'll|let's|let us|you'll|you will|you're|you are|you can see|our|I)\b")
STATES = re.compile(r"\b(is|are|returns?|raises?|means|contains?|uses?|creates?|stores?|takes?|evaluates?|"
                    r"calls?|accepts?|requires?|allows?|provides?|defines?|consists?|refers?|causes?|"
                    r"cannot|can't|must|never|always|only)\b")


@dataclass(frozen=True)
class Candidate:
    doc_id: str
    section: str
    start: int
    end: int
    text: str

    def row(self, number: int, phrasings: Sequence[str]) -> dict:
        return {"id": f"c{number:03d}", "doc_id": self.doc_id, "needle": self.text, "section": self.section,
                "locator": f"#char={self.start},{self.end}", "link": f"{self.doc_id}#char={self.start},{self.end}",
                "questions": {phrasing: "" for phrasing in phrasings}, "kind": "prose"}


def _unspaced(sentence: str) -> bool:
    """Written in a script without spaces between words (Japanese, Chinese, Thai): at least a third of it."""
    return len(UNSPACED.findall(sentence)) >= len(sentence) / 3


def _looks_like_unspaced_prose(sentence: str) -> bool:
    """A sentence of Japanese, Chinese or Thai: measured in characters, mostly letters (its own punctuation
    aside), never a heading's length."""
    if not MIN_CHARACTERS <= len(sentence) <= MAX_CHARACTERS:
        return False
    letters = sum(ch.isalpha() or ch in "、，・「」『』（）" for ch in sentence)
    return letters >= 0.85 * (len(sentence) - 1)


def _looks_like_prose(sentence: str) -> bool:
    if _unspaced(sentence):
        return _looks_like_unspaced_prose(sentence)
    words = _WORD.findall(sentence)
    if not MIN_WORDS <= len(sentence.split()) <= MAX_WORDS:
        return False
    if sum(word.lower() not in STOPWORDS for word in words) < MIN_CONTENT_WORDS:
        return False
    letters = sum(ch.isalpha() or ch.isspace() for ch in sentence)
    if letters < 0.85 * len(sentence):  # code, paths, numbers, markup
        return False
    capitalised = sum(word[0].isupper() for word in words)
    starts = sentence[0].isupper() or (sentence[0].isalpha() and not sentence[0].islower())  # Arabic has no case
    return capitalised <= 0.5 * len(words) and starts  # not a list of names


def statement_score(sentence: str) -> int:
    """How plainly ``sentence`` states a fact of its own (higher is better): it says what something is
    or does, stands without the sentences around it, points nowhere else and does not narrate."""
    sentence = sentence.replace("\u2019", "'")
    words = sentence.split()
    score = 2 * bool(STATES.search(sentence))
    score -= 3 * (words[0].lower().strip(",").removesuffix("'s") in LEANS_ON_CONTEXT)
    score -= 2 * bool(POINTS_ELSEWHERE.search(sentence))
    score -= 2 * bool(NARRATES.search(sentence))
    score -= 2 * sentence.endswith(("?", ":"))
    return score


def sections_at(sections: Sequence[Mapping]) -> Callable[[int], str]:
    def at(offset: int) -> str:
        path = ""
        for section in sections:
            if section["start"] <= offset < section["end"]:
                path = section["path"]
        return path
    return at


def sentences_of(doc_id: str, text: str, sections: Sequence[Mapping]) -> list[Candidate]:
    """The prose sentences of one document's canonical text, with their offsets."""
    headings = {fold(s["heading"]) for s in sections if s.get("heading")}
    section_at = sections_at(sections)
    found = []
    offset = 0
    for paragraph in text.split("\n\n"):
        start = text.find(paragraph, offset)
        offset = start + len(paragraph)
        if "\n" in paragraph or " | " in paragraph or fold(paragraph) in headings:
            continue  # code keeps its lines, a table row its cells, a heading is not a needle
        for match in _SENTENCE.finditer(paragraph):
            sentence = match.group(0).strip()
            if not sentence or not _looks_like_prose(sentence):
                continue
            at = start + paragraph.find(sentence, match.start())
            found.append(Candidate(doc_id, section_at(at), at, at + len(sentence), sentence))
    return found


@dataclass
class Mined:
    candidates: list[Candidate]
    sentences: int  # prose sentences seen
    repeated: int  # left out: they occur more than once
    restated: int  # left out: another sentence says nearly the same
    without_prose: list[str] = field(default_factory=list)  # documents with text and no sentence that could serve


def candidates(documents: Mapping[str, tuple[str, Sequence[Mapping]]], per_document: int = 3, total: int = 50,
               embed: Callable[[list[str]], np.ndarray] | None = None, max_similarity: float = 0.85) -> Mined:
    """Needle candidates from ``documents`` ({doc id: (canonical text, sections)})."""
    folded_docs = [fold(text) for text, _ in documents.values()]
    every = [c for doc_id, (text, sections) in sorted(documents.items()) for c in sentences_of(doc_id, text, sections)]
    with_prose = {c.doc_id for c in every}
    without_prose = [doc_id for doc_id, (text, _) in sorted(documents.items()) if text.strip() and doc_id not in with_prose]
    once = [c for c in every if sum(doc.count(fold(c.text)) for doc in folded_docs) == 1]
    repeated, restated = len(every) - len(once), 0
    if embed is not None and len(every) > 1:
        vectors = np.asarray(embed([c.text for c in every]), dtype=np.float32)
        index = {id(c): i for i, c in enumerate(every)}
        similarity = vectors @ vectors.T
        np.fill_diagonal(similarity, -1.0)
        kept = [c for c in once if similarity[index[id(c)]].max() < max_similarity]
        restated = len(once) - len(kept)
        once = kept
    by_document: dict[str, list[Candidate]] = {}
    for candidate in once:
        by_document.setdefault(candidate.doc_id, []).append(candidate)
    chosen: list[Candidate] = []
    for doc_id in sorted(by_document):  # within a document: one per section first, then the next round
        # the plainest statements first; in the document's order among equals
        own = sorted(by_document[doc_id], key=lambda c: (-statement_score(c.text), c.start))
        seen_sections, picked = set(), []
        for candidate in own:
            if candidate.section not in seen_sections and len(picked) < per_document:
                picked.append(candidate)
                seen_sections.add(candidate.section)
        for candidate in own:
            if len(picked) >= per_document:
                break
            if candidate not in picked:
                picked.append(candidate)
        by_document[doc_id] = picked
    for round_number in range(per_document):  # across documents: round robin, until the total
        for doc_id in sorted(by_document):
            if round_number < len(by_document[doc_id]) and len(chosen) < total:
                chosen.append(by_document[doc_id][round_number])
    return Mined(chosen, len(every), repeated, restated, without_prose)


@dataclass
class Review:
    problems: list[str] = field(default_factory=list)  # what the blocking checks would reject, by line
    drafts: list[str] = field(default_factory=list)  # needles still without a question
    copied: list[str] = field(default_factory=list)  # questions that copy their needle's words
    uncovered_documents: list[str] = field(default_factory=list)
    uncovered_sections: int = 0
    needles: int = 0


def shared_run(question: str, needle: str) -> int:
    """The most consecutive words a question shares with its needle (case folded)."""
    q, n = [w.lower() for w in _WORD.findall(question)], [w.lower() for w in _WORD.findall(needle)]
    best = 0
    for i in range(len(q)):
        for j in range(len(n)):
            length = 0
            while i + length < len(q) and j + length < len(n) and q[i + length] == n[j + length]:
                length += 1
            best = max(best, length)
    return best


def review(records: Sequence[tuple[str, dict]], documents: Mapping[str, tuple[str, Sequence[Mapping]]],
           phrasings: Sequence[str] = ("doc", "ticket"), max_shared_words: int = 5) -> Review:
    """``records`` are (``file:line``, the needle's JSON object)."""
    result = Review(needles=len(records))
    folded = {doc_id: fold(text) for doc_id, (text, _) in documents.items()}
    headings = {doc_id: [fold(s["heading"]) for s in sections if s.get("heading")]
                for doc_id, (_, sections) in documents.items()}
    seen_ids: dict[str, str] = {}
    covered_documents, covered_sections = set(), set()
    for where, record in records:
        needle, doc_id, key = fold(str(record.get("needle", ""))), str(record.get("doc_id", "")), record.get("id")
        if key in seen_ids:
            result.problems.append(f"{where}: id {key!r} is used already at {seen_ids[key]}")
        seen_ids.setdefault(key, where)
        count, own = occurrences(needle, doc_id, folded) if needle else (0, 0)
        if count != 1:
            result.problems.append(f"{where}: {key}: the needle occurs {count} times in the corpus, must occur once")
        elif own != 1:
            result.problems.append(f"{where}: {key}: the needle is not in its document {doc_id!r}")
        if in_a_heading(needle, headings.get(doc_id, ())):
            result.problems.append(f"{where}: {key}: the needle is (inside) a heading")
        questions = record.get("questions") or {}
        required = ("ticket",) if record.get("origin") == "labelled" else phrasings  # a real question is a ticket
        empty = [p for p in required if not str(questions.get(p) or "").strip()]
        if empty:
            result.drafts.append(f"{where}: {key}: no {' or '.join(map(repr, empty))} question yet")
        for phrasing in dict.fromkeys([*required, *questions]):
            question = str(questions.get(phrasing) or "")
            run = shared_run(question, needle) if question.strip() else 0
            if run > max_shared_words:
                result.copied.append(f"{where}: {key}: the {phrasing!r} question shares {run} consecutive words with "
                                     f"its needle (at most {max_shared_words}): the retriever would match words, "
                                     "not meaning")
        if count == 1 and doc_id in documents:
            covered_documents.add(doc_id)
            found = find_folded(documents[doc_id][0], str(record.get("needle", "")))
            covered_sections.add((doc_id, sections_at(documents[doc_id][1])(found[0] if found else 0)))
    result.uncovered_documents = sorted(set(documents) - covered_documents)
    all_sections = {(doc_id, s["path"]) for doc_id, (_, sections) in documents.items() for s in sections}
    result.uncovered_sections = len(all_sections - covered_sections)
    return result
