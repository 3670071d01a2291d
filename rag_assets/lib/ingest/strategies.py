"""The strategies registry: the built-in chunking strategies (``chunking.STRATEGIES``) and the entries of a
strategies file, a team's without code (the ``strategies_file`` setting).

A file is a JSON list of objects, or a TOML file (``.toml``) of ``[[strategy]]`` tables. An entry:

- ``name``: the partition's name (letters, digits, ``.``, ``_``, ``-``: it becomes a folder name);
- ``kind``: ``ours`` (this project's chunker, the default) or a team's splitter: ``langchain``, ``llamaindex``,
  ``chonkie``, ``semchunk``, ``text_splitter`` or ``python`` (``ingest.splitters``);
- ``size`` and ``unit``: how long a chunk may be, in ``characters`` or ``tokens`` (context tokens,
  ``ingest.tokens``), said explicitly; a list of sizes is a sweep;
- ``overlap``: carried from the chunk before, in the same unit, or as a fraction of the size (``0.25``); a list
  is a sweep;
- ``boundaries`` (ours: pack paragraphs and sentences, default true; false cuts blind), ``header`` (the embedded
  text starts with ``[Title > Section path]``), ``whole`` (ours: one chunk per document);
- ``splitter``: the splitter's class (``RecursiveCharacterTextSplitter``), or for ``python`` a
  ``module:function`` taking a text and returning its chunks' texts; ``options``: its other keyword arguments.

A sweep expands to one strategy per size and overlap, named ``<name>-<size><t|c>-o<overlap>`` (``bh-256t-o64``:
256 tokens, 64 of them overlapping): a name becomes a folder name, so it keeps to the safe characters, and it
says the point of the sweep it is. Every member keeps the entry's name as its ``family``, the line it is on in
the size view. A fault is one line naming the file, the entry and the key.
"""

from __future__ import annotations

import json
import tomllib
from itertools import product
from pathlib import Path
from typing import Any, Mapping

from rag_assets.lib.ingest.chunking import CHARACTERS, OURS, STRATEGIES, TOKENS, Strategy
from rag_assets.lib.ingest.semantic import DEFAULT_MODEL, model_argument, semantic_classes
from rag_assets.lib.store.names import name_problem
from rag_assets.lib.store.registry_files import RegistryFile

SPLITTER_KINDS = ("langchain", "llamaindex", "chonkie", "semchunk", "text_splitter", "python")
KINDS = (OURS, *SPLITTER_KINDS)
KEYS = ("name", "kind", "size", "unit", "overlap", "boundaries", "header", "whole", "splitter", "options", "model")
WINDOW_TIMES = 8  # a chunk may be at most 8 times the largest registered model's window (in tokens)
CHARACTERS_PER_TOKEN = 4  # for a size in characters: the same limit, at about 4 characters a token
DEFAULT_WINDOW = 512


class StrategyFileError(ValueError):
    """A strategies file that cannot be used: the message names the file, the entry and the key."""

    paragraph = True


def strategies_from_file(path: Path, largest_window: int = DEFAULT_WINDOW) -> dict[str, Strategy]:
    """Every strategy a strategies file declares, sweeps expanded, in order."""
    where = f"strategies file {path}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise StrategyFileError(f"{where}: {getattr(error, 'strerror', None) or error}") from error
    entries = _entries(text, where, str(path).endswith(".toml"))
    strategies: dict[str, Strategy] = {}
    origin: dict[str, int] = {}
    for number, entry in enumerate(entries, 1):
        named = entry.get("name") if isinstance(entry, dict) else None
        at = f"{where}, entry {number}" + (f" ({named!r})" if isinstance(named, str) else "")
        for strategy in strategies_of_entry(entry, at, largest_window):
            if strategy.name in STRATEGIES:
                raise StrategyFileError(f"{at}: key 'name': {strategy.name!r} is a built-in strategy's name; "
                                        "choose another (the built-in one stays as it is)")
            if strategy.name in strategies:
                raise StrategyFileError(f"{at}: key 'name': {strategy.name!r} is entry {origin[strategy.name]}'s "
                                        "too; each name is one strategy")
            strategies[strategy.name], origin[strategy.name] = strategy, number
    return strategies


def _entries(text: str, where: str, toml: bool) -> list:
    if toml:
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise StrategyFileError(f"{where}: not TOML: {error}") from error
        unknown = sorted(set(document) - {"strategy"})
        if unknown:
            raise StrategyFileError(f"{where}: unknown table(s) {', '.join(map(repr, unknown))}; the entries are "
                                    "[[strategy]] tables")
        entries = document.get("strategy", [])
    else:
        try:
            entries = json.loads(text)
        except json.JSONDecodeError as error:
            raise StrategyFileError(f"{where}: not JSON: line {error.lineno}, column {error.colno}: "
                                    f"{error.msg}") from error
    if not isinstance(entries, list):
        raise StrategyFileError(f"{where}: must be a list of entries, one per strategy (JSON), or [[strategy]] "
                                f"tables (TOML); it is a {type(entries).__name__}")
    return entries


def strategies_of_entry(entry: object, at: str, largest_window: int = DEFAULT_WINDOW) -> list[Strategy]:
    """The strategies of one entry (several for a sweep), or StrategyFileError naming ``at`` and the key."""
    if not isinstance(entry, dict):
        raise StrategyFileError(f"{at}: is a {type(entry).__name__}, not an object with the keys {', '.join(KEYS)}")
    unknown = sorted(set(entry) - set(KEYS))
    if unknown:
        raise StrategyFileError(f"{at}: unknown key(s) {', '.join(map(repr, unknown))}; the keys are "
                                f"{', '.join(KEYS)}")
    name = entry.get("name")
    problem = name_problem(name) if "name" in entry else "is missing"
    if problem:
        raise StrategyFileError(f"{at}: key 'name' {problem}; a name becomes a folder name: letters, digits, "
                                "'.', '_' and '-', at most 64 characters, without '..' or '__'")
    kind = entry.get("kind", OURS)
    if kind not in KINDS:
        raise StrategyFileError(f"{at}: key 'kind': {kind!r} is not a kind; the kinds are {', '.join(KINDS)}")
    flags = {key: _flag(entry, key, default, at) for key, default in
             (("boundaries", True), ("header", False), ("whole", False))}
    if kind != OURS and (("boundaries" in entry) or flags["whole"]):
        raise StrategyFileError(f"{at}: key {'boundaries' if 'boundaries' in entry else 'whole'!r} is ours only; "
                                f"a {kind} splitter cuts where it cuts")
    splitter = entry.get("splitter", "")
    if kind == OURS and "splitter" in entry:
        raise StrategyFileError(f"{at}: key 'splitter' is for a team's splitter (kind {', '.join(SPLITTER_KINDS)})")
    if kind in SPLITTER_KINDS and kind not in ("semchunk",) and (not isinstance(splitter, str) or not splitter):
        raise StrategyFileError(f"{at}: key 'splitter': a {kind} strategy names its splitter "
                                f"({'module:function' if kind == 'python' else 'its class'})")
    model = _model(entry, kind, splitter, at)
    options = entry.get("options", {})
    if not isinstance(options, dict) or kind == OURS and options:
        raise StrategyFileError(f"{at}: key 'options': " + ("an object of the splitter's keyword arguments"
                                                            if kind != OURS else "ours takes none"))
    try:
        frozen_options = tuple(sorted((str(key), json.dumps(value, sort_keys=True)) for key, value in options.items()))
    except (TypeError, ValueError) as error:
        raise StrategyFileError(f"{at}: key 'options': {error}") from error
    sizes = _listed(entry, "size", at)
    overlaps = _listed(entry, "overlap", at) or [0]
    unit = entry.get("unit")
    if sizes and unit not in (CHARACTERS, TOKENS):
        raise StrategyFileError(f"{at}: key 'unit': a size is in {CHARACTERS!r} or {TOKENS!r}, said explicitly "
                                f"(it is {unit!r})")
    if not sizes:
        if kind == OURS and not flags["whole"]:
            raise StrategyFileError(f"{at}: key 'size' is missing; ours cuts at a size (with 'unit')")
        if entry.get("overlap"):
            raise StrategyFileError(f"{at}: key 'overlap' needs a 'size' it is below")
        if "unit" in entry:
            raise StrategyFileError(f"{at}: key 'unit' without a 'size'")
    limit = largest_window * WINDOW_TIMES * (CHARACTERS_PER_TOKEN if unit == CHARACTERS else 1)
    sweep = len(sizes) > 1 or len(overlaps) > 1
    made = []
    for size, overlap in product(sizes or [0], overlaps):
        if isinstance(size, bool) or not isinstance(size, int) or (sizes and not 0 < size <= limit):
            raise StrategyFileError(f"{at}: key 'size': {size!r} is not a whole number from 1 to {limit} "
                                    f"({WINDOW_TIMES} times the largest model window, {largest_window} tokens"
                                    f"{', at 4 characters a token' if unit == CHARACTERS else ''})")
        resolved = _overlap(overlap, size, at)
        letter = "t" if unit == TOKENS else "c"
        member = f"{name}-{size}{letter}-o{resolved}" if sweep else name
        problem = name_problem(member)
        if problem:
            raise StrategyFileError(f"{at}: key 'name': the sweep's name {member!r} {problem}; shorten the name")
        made.append(Strategy(member, target=size, overlap=resolved, boundaries=flags["boundaries"] and kind == OURS,
                             header=flags["header"], whole=flags["whole"], unit=unit or CHARACTERS, kind=kind,
                             splitter=splitter, options=frozen_options, family=name, model=model))
    return made


def _model(entry: Mapping[str, Any], kind: str, splitter: object, at: str) -> str:
    """A semantic splitter's embedding model: the entry's 'model' (a registry key), else the default model; '' for
    every other strategy, which may not name one."""
    embeds = isinstance(splitter, str) and model_argument(kind, splitter) is not None
    if "model" not in entry:
        return DEFAULT_MODEL if embeds else ""
    model = entry["model"]
    if not embeds:
        raise StrategyFileError(f"{at}: key 'model' is for a splitter that embeds ({semantic_classes()})")
    if not isinstance(model, str) or not model:
        raise StrategyFileError(f"{at}: key 'model': a registered model's name, not {model!r}")
    return model


def _flag(entry: Mapping[str, Any], key: str, default: bool, at: str) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise StrategyFileError(f"{at}: key {key!r}: true or false, not {value!r}")
    return value


def _listed(entry: Mapping[str, Any], key: str, at: str) -> list:
    value = entry.get(key)
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if not values or len(set(map(repr, values))) != len(values):
        raise StrategyFileError(f"{at}: key {key!r}: " + ("an empty list" if not values else
                                                          f"{value!r} lists a value twice"))
    return values


def _overlap(overlap: object, size: int, at: str) -> int:
    """The overlap in the size's unit: a whole number below the size, or a fraction of it from 0 up to 1."""
    if isinstance(overlap, bool) or not isinstance(overlap, (int, float)):
        raise StrategyFileError(f"{at}: key 'overlap': {overlap!r} is neither a number of the unit nor a fraction")
    if isinstance(overlap, float):
        if not 0 <= overlap < 1:
            raise StrategyFileError(f"{at}: key 'overlap': the fraction {overlap!r} is not from 0 up to (not "
                                    "including) 1")
        overlap = round(overlap * size)
    if not 0 <= overlap < max(size, 1) or (overlap and not size):
        raise StrategyFileError(f"{at}: key 'overlap': {overlap} is not below the size {size}")
    return int(overlap)


_files: dict[tuple[str, int], RegistryFile] = {}


def registry(strategies_file: str | Path, largest_window: int = DEFAULT_WINDOW) -> dict[str, Strategy]:
    """Every registered strategy by name, in order: the built-in ones, then those of ``strategies_file`` ('' for
    none). The file is read again when it changed."""
    path = str(strategies_file or "")
    if not path:
        return dict(STRATEGIES)
    key = (path, largest_window)
    if key not in _files:
        _files[key] = RegistryFile(lambda file: strategies_from_file(file, largest_window),
                                   lambda why: StrategyFileError(f"strategies file {path}: {why}"))
    return {**STRATEGIES, **_files[key].get(path)}
