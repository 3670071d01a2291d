"""Where a text lies in the canonical document texts: exactly (folded as a reader compares text:
``folding.fold``), or at its best approximate match (the share of its characters the match covers, recorded).
An external retriever's passage is placed this way (``retrieve.external.locate``), and so is a needle a writer
edited (``evalsets.relocation``)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Mapping

from rag_assets.lib.ingest.folding import fold, folded_with_offsets

LOCATED_RATIO = 0.85  # the least share of a text's characters an approximate match must cover to locate it
SEED = 8  # an approximate match shares at least one run of this many characters with the text exactly
PLACES = 4  # the places of a document where most of those runs line up that are compared with the text
MIN_RUN = 3  # an approximate match starts and ends with a run this long: a letter or two of the next
# sentence matched at either end is chance, not the text


@dataclass(frozen=True)
class Located:
    doc_id: str | None  # where the text is in the corpus, or None
    start: int | None
    end: int | None
    ratio: float  # 1.0 exact; the share of the text's characters the best match covers; 0.0 not located


class Aligner:
    """Finds where a text lies in the canonical texts (folded once per document)."""

    def __init__(self, documents: Mapping[str, str]) -> None:
        self.documents = documents
        self.folded = {doc_id: folded_with_offsets(text) for doc_id, text in documents.items()}

    def align(self, text: str, doc_id: str | None = None) -> Located:
        """Where ``text`` lies: in document ``doc_id`` when the corpus has it, else in any document."""
        text = fold(text)
        if not text:
            return Located(None, None, None, 0.0)
        candidates = [doc_id] if doc_id in self.folded else list(self.folded)
        for doc_id in candidates:
            folded, offsets = self.folded[doc_id]
            at = folded.find(text)
            if at >= 0:
                return Located(doc_id, offsets[at], offsets[at + len(text) - 1] + 1, 1.0)
        best = Located(None, None, None, 0.0)
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(text)  # the text, compared with each place it may come from
        for doc_id in candidates:
            folded, offsets = self.folded[doc_id]
            for start, end in _places(text, folded):
                matcher.set_seq1(folded[start:end])
                blocks = matcher.get_matching_blocks()[:-1]
                runs = [b for b in blocks if b.size >= MIN_RUN]
                if not runs:
                    continue
                first, last = runs[0].a, runs[-1].a + runs[-1].size
                covered = sum(b.size for b in blocks if first <= b.a < last) / len(text)
                if covered > best.ratio:
                    best = Located(doc_id, offsets[start + first], offsets[start + last - 1] + 1, round(covered, 4))
        return best if best.ratio >= LOCATED_RATIO else Located(None, None, None, best.ratio)


def _places(text: str, folded: str) -> list[tuple[int, int]]:
    """Where in a folded document ``text`` may approximately lie, as (start, end), in document order: the
    ``PLACES`` stretches where most of its ``SEED``-character runs occur exactly in line (a run found at ``at``
    that is at ``a`` in the text puts the text's start at ``at - a``), widened by a quarter of the text for
    what was inserted or deleted. Never the whole document: a passage matched character by character all
    over a page would "cover" any text."""
    seed = max(MIN_RUN, min(SEED, len(text) // 2))  # shorter for a short text, never a letter or two
    width = max(1, len(text) // 4)
    votes: dict[int, set[int]] = {}
    for a in range(0, len(text) - seed + 1, max(1, seed // 2)):
        at = folded.find(text[a:a + seed])
        while at >= 0:
            votes.setdefault((at - a) // width, set()).add(a)
            at = folded.find(text[a:a + seed], at + 1)
    likeliest = sorted(votes, key=lambda bucket: (-len(votes[bucket]), bucket))[:PLACES]
    return [(max(0, bucket * width - width), min(len(folded), (bucket + 1) * width + len(text) + width))
            for bucket in sorted(likeliest)]
