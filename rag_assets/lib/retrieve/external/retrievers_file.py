"""The registry of external retrievers: a JSON file (the path comes from the caller) holding a list of
entries with a ``key`` and a ``kind``, each validated as its kind's model (a pydantic union keyed by
``kind``). A bad file is one message naming the file, the entry and what is wrong."""

from __future__ import annotations

import functools
import json
import threading
from pathlib import Path
from typing import Annotated, Any, Mapping, Union, get_args

from pydantic import Field, TypeAdapter, ValidationError

from rag_assets.lib.retrieve.external.hits import Ask, Embed, ExternalRetrieverError, Hit, QueryFailed, QueryLimits
from rag_assets.lib.retrieve.external.kinds.base import KEY, ExternalSpec
from rag_assets.lib.retrieve.external.kinds.chroma_collection import ChromaEntry
from rag_assets.lib.retrieve.external.kinds.http_service import HttpEntry
from rag_assets.lib.retrieve.external.kinds.lancedb_table import LanceDBEntry
from rag_assets.lib.retrieve.external.kinds.opensearch_index import OpenSearchEntry
from rag_assets.lib.retrieve.external.kinds.pgvector_table import PgvectorEntry
from rag_assets.lib.retrieve.external.kinds.python_object import PythonEntry
from rag_assets.lib.retrieve.external.kinds.qdrant_collection import QdrantEntry
from rag_assets.lib.store.names import UnsafeName, check_name
from rag_assets.lib.store.registry_files import RegistryFile

# every kind, in the order messages list them: a new kind is its module under kinds/ and its entry here
ENTRY_TYPES: tuple[type[ExternalSpec], ...] = (HttpEntry, PythonEntry, ChromaEntry, LanceDBEntry, PgvectorEntry,
                                               QdrantEntry, OpenSearchEntry)
KINDS = tuple(get_args(entry.model_fields["kind"].annotation)[0] for entry in ENTRY_TYPES)
_BY_KIND = dict(zip(KINDS, ENTRY_TYPES))
_ENTRY = TypeAdapter(Annotated[Union[ENTRY_TYPES], Field(discriminator="kind")])
_HEADERS = "headers must map a header to the environment variable holding its value"


def spec_from(fields: Any, where: str = "retriever entry") -> ExternalSpec:
    """One entry (``{"key", "kind", ...}``) validated as its kind; ExternalRetrieverError names ``where``,
    the key and what is wrong."""
    if not isinstance(fields, Mapping):
        raise ExternalRetrieverError(f"{where}: is a JSON {type(fields).__name__}, not an object")
    try:
        return _ENTRY.validate_python(fields)
    except ValidationError as error:
        raise ExternalRetrieverError(where + _problem(fields, error.errors(include_url=False))) from None


def _problem(fields: Mapping[str, Any], errors: list) -> str:
    """What is wrong with an entry, in the words of the file: the kind, else the key, else its fields."""
    if any(error["type"].startswith("union_tag") for error in errors):
        return f": kind {fields.get('kind')!r}; use one of {', '.join(KINDS)}"
    kind = fields["kind"]
    named = [(str(error["loc"][1]) if len(error["loc"]) > 1 else "", error) for error in errors]  # loc[0]: the kind
    if any(name == "key" for name, _ in named):
        try:
            check_name(fields.get("key"), KEY)
        except UnsafeName as error:
            return f": {error}"
    unknown = sorted(name for name, error in named if error["type"] == "extra_forbidden")
    missing = sorted(name for name, error in named if error["type"] == "missing")
    said = [f"unknown field(s) {', '.join(unknown)}"] * bool(unknown) + [f"missing field(s) {', '.join(missing)}"] * bool(missing)
    if said:
        said.append(f"a {kind} entry has {', '.join(_BY_KIND[kind].fields())}")
    if any(name == "headers" for name, _ in named):
        said.append(_HEADERS)
    said += [f"{'.'.join(map(str, error['loc'][1:]))} is {error['input']!r}: {error['msg'][:1].lower()}{error['msg'][1:]}"
             for name, error in named if name != "headers" and error["type"] not in ("extra_forbidden", "missing")]
    return f" (key {fields.get('key')!r}): " + "; ".join(said)


def specs_from_file(path: Path) -> dict[str, ExternalSpec]:
    """The entries of a retrievers file, each checked; ExternalRetrieverError names the file, entry and field."""
    where = f"retrievers file {path}"
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ExternalRetrieverError(f"{where}: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        line = Path(path).read_bytes()[:error.start].count(b"\n") + 1
        raise ExternalRetrieverError(f"{where}: not UTF-8 (line {line}, byte {error.start}); save it as UTF-8 "
                                     "JSON") from None
    except json.JSONDecodeError as error:
        raise ExternalRetrieverError(f"{where}: not JSON: line {error.lineno}, column {error.colno}: {error.msg}") from error
    if not isinstance(entries, list):
        raise ExternalRetrieverError(f"{where}: must be a JSON list of objects, one per retriever")
    specs: dict[str, ExternalSpec] = {}
    for number, entry in enumerate(entries, 1):
        here = f"{where}, entry {number}"
        spec = spec_from(entry, here)
        if spec.key in specs:
            raise ExternalRetrieverError(f"{here}: key {spec.key!r} is registered twice")
        specs[spec.key] = spec
    return specs


@functools.lru_cache(maxsize=8)
def _file(path: str) -> RegistryFile[dict[str, ExternalSpec]]:
    return RegistryFile(specs_from_file, lambda why: ExternalRetrieverError(f"retrievers file {path}: {why}"))


def registry(retrievers_file: str | Path) -> dict[str, ExternalSpec]:
    """The external retrievers ``retrievers_file`` registers (read again when it changed); none for ``''``."""
    path = str(retrievers_file) if retrievers_file else ""
    return dict(_file(path).get(path)) if path else {}


def asker(spec: ExternalSpec, embed: Embed | None = None, environ: Mapping[str, str] | None = None,
          limits: QueryLimits = QueryLimits()) -> Ask:
    """How to ask ``spec``'s retriever one query: ``(query, k) -> hits``, raising QueryFailed for one query.
    ``embed``: the query vectors of ``spec.embedding_model()``; ``environ``: the values of the variables
    ``spec.variables()`` names, read by the caller (lib never reads the environment). Every kind is held to
    ``limits`` (``bounded``); the http kind also stops reading an answer past them."""
    return bounded(spec.asker(embed, {} if environ is None else environ, limits), limits)


def bounded(ask: Ask, limits: QueryLimits) -> Ask:
    """``ask`` under ``limits``: run in a thread of its own and waited for at most the deadline (a retriever that
    hangs or sleeps fails the query, and its thread is left to end by itself, never waited for), its hits' text
    at most ``max_answer_bytes``."""
    def call(query: str, k: int) -> list[Hit]:
        outcome: dict = {}

        def run() -> None:
            try:
                outcome["hits"] = ask(query, k)
            except BaseException as error:  # noqa: BLE001 - handed to the caller below
                outcome["error"] = error

        worker = threading.Thread(target=run, name="external-query", daemon=True)
        worker.start()
        worker.join(limits.deadline_seconds)
        if worker.is_alive():
            raise QueryFailed(f"no answer within the {limits.deadline_seconds:g}-second deadline of a query")
        if "error" in outcome:
            raise outcome["error"]
        size = sum(len(hit.text.encode("utf-8")) for hit in outcome["hits"])
        if size > limits.max_answer_bytes:
            raise QueryFailed(f"an answer of {size:,} bytes of text, over the {limits.max_answer_bytes:,}-byte limit")
        return outcome["hits"]
    return call
