"""How faithful a canonical text is to the site its tool builds: sentence by sentence, both ways.

The oracle is the ecosystem's own build (``sphinx-build``, ``mkdocs build``): a sentence of the built
page that is missing from our text is content lost; a sentence of ours that is not on the page is
markup kept (or content the site does not show). Sentences are compared with whitespace folded, case
and punctuation ignored, as substrings of the other side's whole text (paragraph breaks and labels
such as "Note:" differ between builders without changing what a reader reads).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_NOT_WORD = re.compile(r"[^\w]+")


def normalized(text: str) -> str:
    """Lower case, every run of non-word characters one space."""
    return _NOT_WORD.sub(" ", text.lower()).strip()


def sentences(text: str, shortest: int = 3) -> list[str]:
    """The sentences of ``text`` (paragraphs split at sentence ends), normalised, of at least ``shortest``
    words (a lone label or a heading of one word says nothing about fidelity)."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        for sentence in _SENTENCE_END.split(" ".join(paragraph.split())):
            words = normalized(sentence)
            if len(words.split()) >= shortest:
                found.append(words)
    return found


@dataclass(frozen=True)
class Coverage:
    site_sentences: int
    site_in_ours: int  # of the site's sentences, found in our text
    our_sentences: int
    ours_in_site: int  # of ours, found on the site

    @property
    def recall(self) -> float:
        """Share of the site's sentences in our text (1.0 when the site has none)."""
        return self.site_in_ours / self.site_sentences if self.site_sentences else 1.0

    @property
    def precision(self) -> float:
        """Share of our sentences on the site (1.0 when we have none)."""
        return self.ours_in_site / self.our_sentences if self.our_sentences else 1.0


def coverage(ours: str, site: str) -> tuple[Coverage, list[str], list[str]]:
    """(the counts, the site's sentences we miss, our sentences the site does not have)."""
    our_whole, site_whole = f" {normalized(ours)} ", f" {normalized(site)} "
    site_sentences, our_sentences = sentences(site), sentences(ours)
    missed = [s for s in site_sentences if f" {s} " not in our_whole]
    extra = [s for s in our_sentences if f" {s} " not in site_whole]
    return (Coverage(len(site_sentences), len(site_sentences) - len(missed), len(our_sentences),
                     len(our_sentences) - len(extra)), missed, extra)
