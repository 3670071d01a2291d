"""Candidate answers for a real question, pooled as TREC pools its judgements: the top chunks of every
configuration of the latest evaluation, fused, and offered as the *sentences* they hold, best first.

A chunk differs between strategies, a sentence does not: each configuration's top ``depth`` chunks give
every whole sentence of their ``content`` a reciprocal-rank share (``1 / (FUSION_K + rank)``), summed over
configurations. The offered order fuses that pool ranking with the sentence's own cosine to the question
(the default model) and with the cosine of the sentence under its section's heading, again by reciprocal
rank: a chunk found by many configurations brings its sentences forward, and among them the one that says
what was asked comes first. A sentence that cannot be a needle
(it occurs more than once in the corpus, is a heading or lies in one, is too short or too long) is offered
after the others with the reason, and cannot be picked.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from rag_assets.lib.evalsets.checks import in_a_heading, occurrences
from rag_assets.lib.evalsets.mining import UNSPACED, sections_at
from rag_assets.lib.evalsets.queries import MAX_NEEDLE_CHARS
from rag_assets.lib.ingest.folding import fold

FUSION_K = 10  # the pool is read from its top: a small constant keeps the first ranks apart
DEPTH = 10  # chunks taken from each configuration's ranking
POOLED = 400  # sentences, by pooled score, that the question's own cosine then orders
UNDER_HEADING = 100  # of those, the best by pool and cosine that are also ranked under their heading
MIN_WORDS, MINUNSPACED_CHARACTERS = 4, 8
# a sentence ends at . ! ? followed by a space or the end (".venv" and "os.path" stay inside it), at a CJK
# full stop, or at a line's end
_SENTENCE = re.compile(r"(?:[^.!?。！？؟\n]|[.!?؟](?=\S))+(?:[.!?؟](?=\s|$)|[。！？]|(?=\n|$))")


@dataclass(frozen=True)
class Sentence:
    doc_id: str
    start: int  # in the document's canonical text
    end: int
    text: str
    section: str


@dataclass
class Offer:
    sentence: Sentence
    pooled: float  # the summed reciprocal-rank shares of the chunks that hold it
    configurations: int  # how many configurations ranked a chunk holding it within the depth
    cosine: float
    problem: str | None  # why it cannot be a needle; None when it can
    before: str = ""  # a little of the text around it
    after: str = ""

    def row(self) -> dict:
        return {**asdict(self.sentence), "pooled": self.pooled, "configurations": self.configurations,
                "cosine": self.cosine, "problem": self.problem, "before": self.before, "after": self.after}


def sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The whole sentences of ``text[start:end]`` as (start, end) in ``text``: split at . ! ? (and CJK and
    Arabic ends) and at line ends, stripped of surrounding whitespace."""
    spans = []
    for match in _SENTENCE.finditer(text, start):  # read on past ``end``: a sentence the chunk cuts is not whole
        if match.start() >= end:
            break
        raw = match.group(0)
        left = len(raw) - len(raw.lstrip())
        right = len(raw.rstrip())
        if right > left and match.start() + right <= end:
            spans.append((match.start() + left, match.start() + right))
    return spans


class Corpus:
    """The extracted documents, folded once, to check a sentence against the needle rules."""

    def __init__(self, documents: Mapping[str, tuple[str, Sequence[Mapping]]]) -> None:
        self.texts = {doc_id: text for doc_id, (text, _) in documents.items()}
        self.sections = {doc_id: list(sections) for doc_id, (_, sections) in documents.items()}
        self.folded = {doc_id: fold(text) for doc_id, text in self.texts.items()}
        self.headings = {doc_id: [fold(s["heading"]) for s in sections if s.get("heading")]
                         for doc_id, sections in self.sections.items()}
        self._problems: dict[str, str | None] = {}
        self._sentences: dict[tuple[str, int, int], list[Sentence]] = {}

    def sentences(self, doc_id: str, start: int, end: int) -> list[Sentence]:
        """The whole sentences of a chunk's content, kept: every strategy's chunks share them."""
        key = (doc_id, start, end)
        if key not in self._sentences:
            text = self.texts[doc_id]
            self._sentences[key] = [Sentence(doc_id, s, e, text[s:e], self.section_at(doc_id, s))
                                    for s, e in sentence_spans(text, start, end)]
        return self._sentences[key]

    def section_at(self, doc_id: str, offset: int) -> str:
        return sections_at(self.sections.get(doc_id, []))(offset)

    def problem(self, sentence: Sentence) -> str | None:
        """Why ``sentence`` cannot be a needle (the evaluation's rules), or None."""
        key = f"{sentence.doc_id}\0{sentence.text}"
        if key not in self._problems:
            self._problems[key] = self._problem_of(sentence)
        return self._problems[key]

    def _problem_of(self, sentence: Sentence) -> str | None:
        folded = fold(sentence.text)
        unspaced = len(UNSPACED.findall(folded)) >= len(folded) / 3
        if (len(folded) < MINUNSPACED_CHARACTERS) if unspaced else (len(folded.split()) < MIN_WORDS):
            return "too short to ask about"
        if len(sentence.text) > MAX_NEEDLE_CHARS:
            return f"longer than a needle may be ({MAX_NEEDLE_CHARS} characters)"
        if in_a_heading(folded, self.headings.get(sentence.doc_id, [])):
            return "a heading"
        total, _ = occurrences(folded, sentence.doc_id, self.folded)
        if total != 1:
            return f"occurs {total} times in the corpus"
        return None


def pool(rankings: Iterable[Sequence[tuple[str, int, int]]], corpus: Corpus, depth: int = DEPTH,
         ) -> dict[Sentence, tuple[float, int]]:
    """{sentence: (pooled score, configurations)} over the rankings (each a configuration's chunks as
    (doc_id, start, end) of their content, best first)."""
    scores: dict[Sentence, list] = {}
    for ranking in rankings:
        seen: set[Sentence] = set()
        for rank, (doc_id, start, end) in enumerate(ranking[:depth], 1):
            if doc_id not in corpus.texts:
                continue
            for sentence in corpus.sentences(doc_id, start, end):
                entry = scores.setdefault(sentence, [0.0, 0])
                entry[0] += 1.0 / (FUSION_K + rank) if sentence not in seen else 0.0
                if sentence not in seen:
                    entry[1] += 1
                    seen.add(sentence)
    return {sentence: (score, count) for sentence, (score, count) in scores.items()}


def context(corpus: Corpus, sentence: Sentence, characters: int = 160) -> tuple[str, str]:
    text = corpus.texts[sentence.doc_id]
    before = " ".join(text[max(0, sentence.start - characters):sentence.start].split())
    after = " ".join(text[sentence.end:sentence.end + characters].split())
    return before, after


class CachedEmbedder:
    """An embedding function that embeds each text once: a sentence pooled for many questions (both phrasings
    of one need, a chunk every strategy shares) is embedded the first time only."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray]) -> None:
        self.embed, self.vectors = embed, {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        new = [text for text in dict.fromkeys(texts) if text not in self.vectors]
        if new:
            self.vectors.update(zip(new, np.asarray(self.embed(new), dtype=np.float32)))
        return np.stack([self.vectors[text] for text in texts])


def headed(sentence: Sentence) -> str:
    """The sentence as its section's heading introduces it: "Handling Exceptions: <sentence>". A sentence
    often leaves its subject to the heading above it ("Note the last block: ... never fails to match")."""
    heading = sentence.section.split(" > ")[-1] if sentence.section else ""
    return f"{heading}: {sentence.text}" if heading else sentence.text


def ranks(scores: Sequence[float]) -> np.ndarray:
    """Each score's rank, 1 for the highest; equal scores share the mean of their ranks (a tie says nothing,
    so it must not repeat another ranking's order)."""
    from scipy.stats import rankdata

    return rankdata(-np.asarray(scores, dtype=np.float64), method="average")


def offers(question: str, pooled: Mapping[Sentence, tuple[float, int]], corpus: Corpus,
           embed: Callable[[list[str]], np.ndarray] | None, kept: int = POOLED) -> list[Offer]:
    """The ``kept`` best pooled sentences, best first; those that cannot be needles last. The order fuses, by
    reciprocal rank, three rankings of them: the pool's, the question's cosine to the sentence, and to the
    sentence under its heading, this one for the ``UNDER_HEADING`` best by the first two (``bench/pool_orders.py``:
    0.785 at 10 with the first two, 0.808 with all three, on the default corpus; ranking only the best 60 under
    their heading changes nothing there)."""
    sentences = sorted(pooled, key=lambda s: (-pooled[s][0], s.doc_id, s.start))[:kept]
    if not sentences:
        return []
    fused = 1.0 / (FUSION_K + ranks([pooled[s][0] for s in sentences]))
    cosines = np.zeros(len(sentences), dtype=np.float32)
    if embed is not None:
        vectors = np.asarray(embed([question, *[s.text for s in sentences]]), dtype=np.float32)
        cosines = vectors[1:] @ vectors[0]
        fused = fused + 1.0 / (FUSION_K + ranks(cosines))
        best = np.argsort(-fused, kind="stable")[:UNDER_HEADING]  # the rest would not reach the first pages
        headed_vectors = np.asarray(embed([headed(sentences[i]) for i in best]), dtype=np.float32)
        under_heading = np.full(len(sentences), -np.inf)
        under_heading[best] = headed_vectors @ vectors[0]
        fused = fused + 1.0 / (FUSION_K + ranks(under_heading))
    made = []
    for i, sentence in enumerate(sentences):
        before, after = context(corpus, sentence)
        made.append(Offer(sentence, pooled[sentence][0], pooled[sentence][1], float(cosines[i]),
                          corpus.problem(sentence), before, after))
    order = sorted(range(len(made)), key=lambda i: (made[i].problem is not None, -fused[i], sentences[i].doc_id,
                                                    sentences[i].start))
    return [made[i] for i in order]
