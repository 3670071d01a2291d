"""The retrievers a team already runs, judged by the same needles as the built-in configurations.

An external retriever is registered without code, in the JSON file the ``retrievers_file`` setting names
(``RAG_ASSETS_RETRIEVERS_FILE``): a list of entries with a ``key`` and a ``kind``.

- ``http``: ``{"key": "prod", "kind": "http", "url": "https://...", "headers": {"Authorization":
  "PROD_TOKEN"}}``. Each query is POSTed as ``{"query": ..., "k": ...}``; the answer is
  ``{"hits": [{"text": ..., "doc_id": ..., "score": ..., "distance": ..., "metadata": ...}]}`` (only
  ``text`` is required). A header's value is read from the environment variable the entry names, so a
  token is never written in the file, nor in metadata, logs or DuckDB. ``timeout`` seconds per request,
  at most ``in_flight`` requests at once, ``retries`` with exponential backoff on 429 and 5xx.
- ``python``: ``"target": "module:attribute"`` names a function ``(query, k) -> hits`` (dicts as above),
  or an object with LangChain's ``invoke(query)`` (Documents: ``page_content``, ``metadata``) or
  LlamaIndex's ``retrieve(query)`` (NodeWithScore: ``node.get_content()``, ``score``). Neither library
  is a dependency: the adapters read those attributes.
- ``chroma``: a collection on a Chroma server (``host``, ``port``, ``collection``), queried with its own
  embedding function, or with vectors of a registered model (``model``).
- ``lancedb``: a table (``uri``, ``table``, ``text_column``, ``vector_column``) queried with vectors of a
  registered model (``model``).

The judgement is the needle rule on the returned text: a hit is correct when the folded needle lies in
its text (and in the named document when the hit names one). Each hit is located in the canonical text,
exactly (whitespace folded) or by its best approximate match (the match ratio is recorded), so a hit has
a ``#char=`` locator like ours; one that cannot be located is kept, counted, and never correct for a
document query. A query that errs or times out is a miss with its error recorded.
"""

from __future__ import annotations

import difflib
import importlib
import json
import random
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from rag_assets.lib.ingest.canonical import fold_whitespace
from rag_assets.lib.store.names import UnsafeName, check_name
from rag_assets.lib.store.registry_files import RegistryFile
from rag_assets.lib.store.stamps import EXTERNAL_MODEL, PIPELINE_VERSION
from rag_assets.settings import current, inherited

KINDS = ("http", "python", "chroma", "lancedb")
LOCATED_RATIO = 0.85  # the least share of a hit's characters an approximate match must cover to locate it
SEED = 8  # an approximate match shares at least one run of this many characters with the hit exactly
PLACES = 4  # the places of a document where most of those runs line up that are compared with the hit
MIN_RUN = 3  # an approximate match starts and ends with a run this long: a letter or two of the next
# sentence matched at either end is chance, not the hit


class ExternalRetrieverError(ValueError):
    """A registry entry or an answer that cannot be used; the message names the entry and the field."""

    paragraph = True


@dataclass(frozen=True)
class ExternalSpec:
    key: str
    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> dict:
        """What the metadata may show: never a header's value, only the variable it comes from."""
        shown = {name: value for name, value in self.options.items() if name != "headers"}
        if "headers" in self.options:
            shown["headers"] = {header: f"${variable}" for header, variable in self.options["headers"].items()}
        return {"key": self.key, "kind": self.kind, **shown}


_ALLOWED = {
    "http": {"url", "headers", "timeout", "in_flight", "retries", "index_version_url"},
    "python": {"target", "in_flight"},
    "chroma": {"host", "port", "collection", "model", "ssl"},
    "lancedb": {"uri", "table", "text_column", "vector_column", "doc_id_column", "model"},
}
_REQUIRED = {"http": {"url"}, "python": {"target"}, "chroma": {"collection"}, "lancedb": {"uri", "table", "model"}}


def specs_from_file(path: Path) -> dict[str, ExternalSpec]:
    """The entries of a retrievers file, each checked; ExternalRetrieverError names the file, entry and field."""
    where = f"retrievers file {path}"
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ExternalRetrieverError(f"{where}: {error.strerror or error}") from error
    except json.JSONDecodeError as error:
        raise ExternalRetrieverError(f"{where}: not JSON: line {error.lineno}, column {error.colno}: {error.msg}") from error
    if not isinstance(entries, list):
        raise ExternalRetrieverError(f"{where}: must be a JSON list of objects, one per retriever")
    specs: dict[str, ExternalSpec] = {}
    for number, entry in enumerate(entries, 1):
        here = f"{where}, entry {number}"
        if not isinstance(entry, dict):
            raise ExternalRetrieverError(f"{here}: is a JSON {type(entry).__name__}, not an object")
        kind = entry.get("kind")
        if kind not in KINDS:
            raise ExternalRetrieverError(f"{here}: kind {kind!r}; use one of {', '.join(KINDS)}")
        try:
            key = check_name(entry.get("key"), "the retriever key")
        except UnsafeName as error:
            raise ExternalRetrieverError(f"{here}: {error}") from error
        options = {name: value for name, value in entry.items() if name not in ("key", "kind")}
        unknown = sorted(set(options) - _ALLOWED[kind])
        missing = sorted(_REQUIRED[kind] - set(options))
        if unknown or missing:
            raise ExternalRetrieverError(
                f"{here} (key {key!r}): " + "; ".join([f"unknown field(s) {', '.join(unknown)}"] * bool(unknown)
                                                      + [f"missing field(s) {', '.join(missing)}"] * bool(missing))
                + f"; a {kind} entry has {', '.join(sorted(_ALLOWED[kind]))}")
        headers = options.get("headers", {})
        if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
            raise ExternalRetrieverError(f"{here} (key {key!r}): headers must map a header to the environment "
                                         "variable holding its value")
        if key in specs:
            raise ExternalRetrieverError(f"{here}: key {key!r} is registered twice")
        specs[key] = ExternalSpec(key, kind, options)
    return specs


_registry_file = RegistryFile(specs_from_file, lambda why: ExternalRetrieverError(
    f"retrievers file {current().retrievers_file}: {why}"))


def registry() -> dict[str, ExternalSpec]:
    """The external retrievers the ``retrievers_file`` setting registers (read again when it changed)."""
    path = current().retrievers_file
    return dict(_registry_file.get(path)) if path else {}


def external_stamp(key: str, index_version: str, snapshot_id: str | None, extractor_version: str | None) -> dict:
    """The stamp of an external retriever's rows: model ``external``, its key as the strategy (one system,
    its own chunking), the index version it reported (or the hash of its probe answers) as the revision."""
    return {"model": EXTERNAL_MODEL, "revision": index_version, "dimension": 0, "normalized": False,
            "pipeline_version": PIPELINE_VERSION, "extractor_version": extractor_version, "snapshot_id": snapshot_id,
            "strategy": key}


PROBES = ("How do I install it?", "What does the configuration file contain?", "Why does it fail to start?")


def index_version(spec: ExternalSpec, ask: Callable[[str, int], list[Hit]]) -> str:
    """What the retriever says its index version is (``index_version_url``, GET, ``{"version": ...}``), else a
    hash of its answers to fixed probe questions: a re-indexed store answers differently."""
    import hashlib

    url = spec.options.get("index_version_url")
    if url:
        with urllib.request.urlopen(url, timeout=float(spec.options.get("timeout", 10.0))) as response:
            return str(json.loads(response.read()).get("version"))
    digest = hashlib.sha256()
    for probe in PROBES:
        for hit in ask(probe, 10):
            digest.update(f"{hit.doc_id}\0{hit.text}\0".encode("utf-8"))
    return "probe-" + digest.hexdigest()[:16]


# --- hits ----------------------------------------------------------------------------------------------

@dataclass
class Hit:
    text: str
    doc_id: str | None = None
    score: float | None = None
    distance: float | None = None


def hits_from_answer(answer: Any, where: str) -> list[Hit]:
    """Hits from a JSON answer ``{"hits": [...]}`` (or the list itself); a malformed one names the field."""
    items = answer.get("hits") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        raise ExternalRetrieverError(f"{where}: the answer has no list 'hits'")
    return [_hit(item, f"{where}: hits[{number}]") for number, item in enumerate(items)]


def _hit(item: Any, where: str) -> Hit:
    if not isinstance(item, dict):
        raise ExternalRetrieverError(f"{where} is a {type(item).__name__}, not an object")
    text = item.get("text")
    if not isinstance(text, str):
        raise ExternalRetrieverError(f"{where}.text is missing or not a string")
    doc_id = item.get("doc_id", (item.get("metadata") or {}).get("doc_id") if isinstance(item.get("metadata"), dict) else None)
    numbers = {}
    for name in ("score", "distance"):
        value = item.get(name)
        if value is not None and not isinstance(value, (int, float)):
            raise ExternalRetrieverError(f"{where}.{name} is {value!r}, not a number")
        numbers[name] = float(value) if value is not None else None
    return Hit(text, str(doc_id) if doc_id is not None else None, **numbers)


def adapt(result: Any, where: str) -> list[Hit]:
    """Hits from what a Python retriever returns: dicts, LangChain Documents or LlamaIndex NodeWithScore."""
    hits = []
    for number, item in enumerate(result or []):
        if isinstance(item, dict):
            hits.append(_hit(item, f"{where}[{number}]"))
        elif hasattr(item, "page_content"):  # LangChain's Document
            metadata = getattr(item, "metadata", None) or {}
            hits.append(Hit(item.page_content, _str_or_none(metadata.get("doc_id") or metadata.get("source")),
                            _number(metadata.get("score")), _number(metadata.get("distance"))))
        elif hasattr(item, "node") and hasattr(item.node, "get_content"):  # LlamaIndex's NodeWithScore
            metadata = getattr(item.node, "metadata", None) or {}
            hits.append(Hit(item.node.get_content(), _str_or_none(metadata.get("doc_id")), _number(item.score)))
        else:
            raise ExternalRetrieverError(f"{where}[{number}] is a {type(item).__name__}: expected a dict, a LangChain "
                                         "Document or a LlamaIndex NodeWithScore")
    return hits


def _str_or_none(value: Any) -> str | None:
    return str(value) if value is not None else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


# --- asking ----------------------------------------------------------------------------------------------

class QueryFailed(Exception):
    """One query that erred or timed out (recorded as a miss with this message)."""


def http_asker(spec: ExternalSpec, environ: Mapping[str, str] | None = None) -> Callable[[str, int], list[Hit]]:
    """POST ``{"query", "k"}`` with retries and backoff on 429 and 5xx; headers from the environment."""
    environ = inherited(spec.options.get("headers", {}).values()) if environ is None else environ
    missing = [variable for variable in spec.options.get("headers", {}).values() if variable not in environ]
    if missing:
        raise ExternalRetrieverError(f"retriever {spec.key!r}: the environment variable(s) {', '.join(missing)} its "
                                     "headers are read from are not set")
    headers = {"Content-Type": "application/json",
               **{header: environ[variable] for header, variable in spec.options.get("headers", {}).items()}}
    url, timeout = spec.options["url"], float(spec.options.get("timeout", 10.0))
    retries = int(spec.options.get("retries", 3))

    def ask(query: str, k: int) -> list[Hit]:
        body = json.dumps({"query": query, "k": k}).encode("utf-8")
        for attempt in range(retries + 1):
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    payload = response.read()
            except urllib.error.HTTPError as error:
                if (error.code == 429 or error.code >= 500) and attempt < retries:
                    time.sleep(min(8.0, 0.2 * 2 ** attempt) * (1 + random.random() / 4))
                    continue
                raise QueryFailed(f"HTTP {error.code}") from None
            except (TimeoutError, OSError) as error:
                reason = getattr(error, "reason", error)
                raise QueryFailed(f"timed out after {timeout:g} s" if "timed out" in str(reason) else
                                  f"no answer ({reason})") from None
            try:
                return hits_from_answer(json.loads(payload), f"retriever {spec.key!r}")
            except json.JSONDecodeError as error:
                raise QueryFailed(f"the answer is not JSON ({error.msg} at character {error.pos})") from None
            except ExternalRetrieverError as error:
                raise QueryFailed(str(error)) from None
        raise QueryFailed("no answer")  # not reached: the last attempt returns or raises
    return ask


def python_asker(spec: ExternalSpec) -> Callable[[str, int], list[Hit]]:
    module, _, attribute = str(spec.options["target"]).partition(":")
    try:
        target = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError, ValueError) as error:
        raise ExternalRetrieverError(f"retriever {spec.key!r}: cannot import {spec.options['target']!r} ({error})") from error
    where = f"retriever {spec.key!r}"
    if hasattr(target, "invoke"):  # a LangChain retriever
        return lambda query, k: adapt(list(target.invoke(query))[:k], where)
    if hasattr(target, "retrieve"):  # a LlamaIndex retriever
        return lambda query, k: adapt(list(target.retrieve(query))[:k], where)
    if callable(target):
        return lambda query, k: adapt(list(target(query, k))[:k], where)
    raise ExternalRetrieverError(f"{where}: {spec.options['target']!r} is neither a function (query, k) -> hits nor "
                                 "an object with invoke() or retrieve()")


def chroma_asker(spec: ExternalSpec, embed: Callable[[list[str]], Any] | None) -> Callable[[str, int], list[Hit]]:
    import chromadb

    client = chromadb.HttpClient(host=spec.options.get("host", "127.0.0.1"), port=int(spec.options.get("port", 8000)),
                                 ssl=bool(spec.options.get("ssl", False)))
    collection = client.get_collection(spec.options["collection"])

    def ask(query: str, k: int) -> list[Hit]:
        arguments = {"query_embeddings": [list(map(float, embed([query])[0]))]} if embed else {"query_texts": [query]}
        found = collection.query(n_results=k, include=["documents", "metadatas", "distances"], **arguments)
        return [Hit(text, _str_or_none((metadata or {}).get("doc_id")), None, float(distance))
                for text, metadata, distance in zip(found["documents"][0], found["metadatas"][0], found["distances"][0])]
    return ask


def lancedb_asker(spec: ExternalSpec, embed: Callable[[list[str]], Any]) -> Callable[[str, int], list[Hit]]:
    import lancedb

    table = lancedb.connect(spec.options["uri"]).open_table(spec.options["table"])
    text_column = spec.options.get("text_column", "text")
    doc_column = spec.options.get("doc_id_column", "doc_id")
    vector_column = spec.options.get("vector_column", "vector")

    def ask(query: str, k: int) -> list[Hit]:
        rows = (table.search(list(map(float, embed([query])[0])), vector_column_name=vector_column)
                .distance_type("cosine").limit(k).to_list())
        return [Hit(row[text_column], _str_or_none(row.get(doc_column)), None, float(row["_distance"])) for row in rows]
    return ask


def asker(spec: ExternalSpec, embed: Callable[[list[str]], Any] | None = None) -> Callable[[str, int], list[Hit]]:
    """How to ask ``spec``'s retriever one query: ``(query, k) -> hits``, raising QueryFailed for one query."""
    if spec.kind == "http":
        return http_asker(spec)
    if spec.kind == "python":
        return python_asker(spec)
    if spec.kind == "chroma":
        return chroma_asker(spec, embed if spec.options.get("model") else None)
    return lancedb_asker(spec, embed)


@dataclass
class Answered:
    query_id: str
    hits: list[Hit]
    latency_ms: float
    error: str | None = None


def ask_all(ask: Callable[[str, int], list[Hit]], queries: Sequence[tuple[str, str]], k: int,
            in_flight: int = 4) -> list[Answered]:
    """Every (query id, text) asked, at most ``in_flight`` at once, in the queries' order; a query that
    raises is a miss with its error (one exception type never stops the others)."""
    def one(item: tuple[str, str]) -> Answered:
        query_id, text = item
        started = time.perf_counter()
        try:
            hits = ask(text, k)[:k]
            error = None
        except QueryFailed as failure:
            hits, error = [], str(failure)
        except Exception as failure:  # noqa: BLE001 - a retriever's own exception: recorded, never a crash
            hits, error = [], f"{type(failure).__name__}: {str(failure).splitlines()[0] if str(failure) else ''}"
        return Answered(query_id, hits, (time.perf_counter() - started) * 1000.0, error)

    with ThreadPoolExecutor(max_workers=max(1, in_flight)) as pool:
        return list(pool.map(one, queries))


# --- locating and judging ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Located:
    doc_id: str | None  # where the hit's text is in the corpus, or None
    start: int | None
    end: int | None
    ratio: float  # 1.0 exact; the share of the hit's characters the best match covers; 0.0 not located


def _folded_with_offsets(text: str) -> tuple[str, list[int]]:
    """``text`` with whitespace folded, and for each character of it the offset in ``text``."""
    folded, offsets, last_space = [], [], True
    for offset, character in enumerate(text):
        if character.isspace():
            if not last_space:
                folded.append(" ")
                offsets.append(offset)
            last_space = True
        else:
            folded.append(character)
            offsets.append(offset)
            last_space = False
    offsets.append(len(text))
    return "".join(folded), offsets


class Locator:
    """Finds where a returned passage lies in the canonical texts (folded once per document)."""

    def __init__(self, documents: Mapping[str, str]) -> None:
        self.documents = documents
        self.folded = {doc_id: _folded_with_offsets(text) for doc_id, text in documents.items()}

    def locate(self, hit: Hit) -> Located:
        text = fold_whitespace(hit.text)
        if not text:
            return Located(None, None, None, 0.0)
        candidates = [hit.doc_id] if hit.doc_id in self.folded else list(self.folded)
        for doc_id in candidates:
            folded, offsets = self.folded[doc_id]
            at = folded.find(text)
            if at >= 0:
                return Located(doc_id, offsets[at], offsets[at + len(text) - 1] + 1, 1.0)
        best = Located(None, None, None, 0.0)
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(text)  # the hit, compared with each place it may come from
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


def hit_holds(hit: Hit, located: Located, spans: Sequence[tuple[str, str]]) -> bool:
    """The needle rule on a returned passage: located in the corpus, and the folded needle lies in its
    text, in the needle's document. A hit that cannot be located is never correct."""
    if located.doc_id is None:
        return False
    text = fold_whitespace(hit.text)
    return any(fold_whitespace(needle) in text and located.doc_id == doc_id for doc_id, needle in spans)


def hit_id(key: str, rank: int, located: Located) -> str:
    """A hit's id in the rows: its locator in the corpus (``doc#char=start,end``), else ``key:unlocated:rank``."""
    if located.doc_id is None:
        return f"{key}:unlocated:{rank}"
    return f"{located.doc_id}#char={located.start},{located.end}"


MAX_ERROR_SHARE = 0.2  # a run where more queries than this share erred is failed, not recorded


def external_rows(key: str, answered: Sequence[Answered], eval_rows: Sequence[Mapping], documents: Mapping[str, str],
                  stamp: Mapping[str, Any], max_error_share: float = MAX_ERROR_SHARE) -> tuple[list[dict], dict]:
    """(one row per query, in the retrieval rows' columns, judged by the needle rule; the run's figures).

    ExternalRetrieverError when more than ``max_error_share`` of the queries erred: one paragraph naming
    the retriever, the errors by kind and an example."""
    from rag_assets.lib.evalsets.judging import judge
    from rag_assets.lib.evalsets.queries import NEEDLE, OUT_OF_DOMAIN, queries_from_rows

    errors = [a for a in answered if a.error]
    if answered and len(errors) / len(answered) > max_error_share:
        kinds: dict[str, int] = {}
        for failure in errors:
            kinds[failure.error.split(" (")[0]] = kinds.get(failure.error.split(" (")[0], 0) + 1
        raise ExternalRetrieverError(
            f"retriever {key!r} failed {len(errors)} of {len(answered)} queries (more than {max_error_share:.0%}): "
            + ", ".join(f"{count} x {kind}" for kind, count in sorted(kinds.items(), key=lambda i: -i[1]))
            + f"; for example query {errors[0].query_id}: {errors[0].error}. Nothing was recorded for it")
    queries = {q.query_id: q for q in queries_from_rows(eval_rows)}
    by_id = {row["query_id"]: row for row in eval_rows}
    locator = Locator(documents)
    rows, unlocated, approximate = [], 0, 0
    for answer in answered:
        query = queries[answer.query_id]
        placed = [locator.locate(hit) for hit in answer.hits]
        ids = [hit_id(key, rank, where) for rank, where in enumerate(placed, start=1)]
        unlocated += sum(where.doc_id is None for where in placed)
        approximate += sum(where.doc_id is not None and where.ratio < 1.0 for where in placed)
        holders = {i for i, hit, where in zip(ids, answer.hits, placed) if hit_holds(hit, where, query.spans)} \
            if query.query_kind == NEEDLE else set()
        distances = [hit.distance for hit in answer.hits]
        scores = [hit.score if hit.score is not None else -(hit.distance or 0.0) for hit in answer.hits]
        row = {column: by_id[answer.query_id].get(column) for column in
               ("query_id", "needle_id", "phrasing", "query_kind", "kind", "eval_version", "eval_hash")}
        rows.append(row | {
            "retriever": key, "chunk_ids": ids, "scores": scores,
            "distances": distances if answer.hits and all(d is not None for d in distances) else None,
            "latency_ms": answer.latency_ms, "stage_ms": answer.latency_ms, "error": answer.error,
            "located_ratios": [where.ratio for where in placed],
        } | judge(query, ids, holders, {i: where.doc_id for i, where in zip(ids, placed) if where.doc_id}) | dict(stamp))
    judged = [r for r in rows if r["query_kind"] != OUT_OF_DOMAIN]
    figures = {"queries": len(rows), "errors": len(errors), "hits_unlocated": unlocated,
               "hits_located_approximately": approximate,
               "hits_in_top_k": sum(r["hit_rank"] is not None for r in judged),
               "median_latency_ms": round(sorted(a.latency_ms for a in answered)[len(answered) // 2], 2) if answered else 0.0,
               "error_examples": [f"{a.query_id}: {a.error}" for a in errors[:3]]}
    return rows, figures
