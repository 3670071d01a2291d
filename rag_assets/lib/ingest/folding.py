"""How two texts are compared when a person would call them the same: a needle typed from the sources against
the canonical text a documentation tool rendered, a returned passage against the corpus.

``fold`` maps both sides to one form; spans are never cut from the folded form (``folded_with_offsets`` keeps,
for each folded character, its offset in the original, so a match is reported in the canonical text's own
offsets). What is folded:

- whitespace: every run of whitespace, the non-breaking and other Unicode spaces included, is one space, and
  the ends are trimmed; zero-width characters and the soft hyphen are dropped;
- quotes: curly single quotes, the prime and the modifier apostrophe are ``'``; curly and low double quotes
  and the double prime are ``"`` (Sphinx's smart quotes turn ``"true"`` and ``parent's`` into “true” and
  parent’s);
- dashes: every run of hyphens and dashes (hyphen, non-breaking hyphen, figure dash, en and em dash,
  horizontal bar, minus sign) is one ``-``, so ``--`` and ``---`` typed in a source match the en and em dash
  the site shows;
- the ellipsis character is ``...``; the ligatures ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ are their letters;
- accented letters are compared decomposed (NFD), so a precomposed é and an e with a combining accent match.

Case is kept: a needle is verbatim.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_SINGLE = "\u2018\u2019\u201a\u201b\u2032\u02bc"
_DOUBLE = "\u201c\u201d\u201e\u201f\u2033"
_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
_DROPPED = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
              "\ufb06": "st"}
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_WHITESPACE = re.compile(r"\s+")
_DASH_RUN = re.compile(r"-{2,}")


@lru_cache(maxsize=4096)
def fold_character(character: str) -> str:
    """One character's folded form (possibly empty, or several characters); whitespace and dash runs are
    collapsed by the callers."""
    if character in _SINGLE:
        return "'"
    if character in _DOUBLE:
        return '"'
    if character in _DASHES:
        return "-"
    if character in _SPACES or character.isspace():
        return " "
    if character in _DROPPED:
        return ""
    if character == "\u2026":
        return "..."
    if character in _LIGATURES:
        return _LIGATURES[character]
    if ord(character) < 128:
        return character
    return unicodedata.normalize("NFD", character)


def fold(text: str) -> str:
    """``text`` in the form two texts are compared in (see the module)."""
    characters = _NON_ASCII.sub(lambda found: fold_character(found.group()), text)
    return _DASH_RUN.sub("-", _WHITESPACE.sub(" ", characters)).strip(" ")


def folded_with_offsets(text: str) -> tuple[str, list[int]]:
    """``fold(text)``, and for each of its characters the offset in ``text`` of the character it comes from;
    one more offset closes the list (``len(text)``), so ``offsets[i]`` and ``offsets[j - 1] + 1`` delimit in
    ``text`` what ``folded[i:j]`` came from."""
    folded: list[str] = []
    offsets: list[int] = []
    for offset, character in enumerate(text):
        for piece in fold_character(character):
            if piece == " " or piece.isspace():
                if folded and folded[-1] != " ":
                    folded.append(" ")
                    offsets.append(offset)
            elif piece == "-" and folded and folded[-1] == "-":
                continue
            else:
                folded.append(piece)
                offsets.append(offset)
    if folded and folded[-1] == " ":
        folded.pop()
        offsets.pop()
    offsets.append(len(text))
    return "".join(folded), offsets


def find_folded(text: str, needle: str, start: int = 0) -> tuple[int, int] | None:
    """Where ``needle`` lies in ``text``, both folded, as (start, end) offsets of ``text`` itself; None when it
    does not. ``start`` is an offset of ``text`` to search from."""
    wanted = fold(needle)
    if not wanted:
        return None
    folded, offsets = folded_with_offsets(text)
    from_index = next((i for i, offset in enumerate(offsets) if offset >= start), len(folded))
    at = folded.find(wanted, from_index)
    if at < 0:
        return None
    return offsets[at], offsets[at + len(wanted) - 1] + 1
