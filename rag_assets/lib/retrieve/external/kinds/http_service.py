"""Kind ``http``: a search service. Each query is POSTed as ``{"query": ..., "k": ...}``; the answer is
``{"hits": [{"text": ..., "doc_id": ..., "score": ..., "distance": ..., "metadata": ...}]}`` (only ``text``
is required). A header's value comes from the environment variable the entry names, passed in by the
caller, so a token is never written in the file, nor in metadata, logs or DuckDB."""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Literal, Mapping

from pydantic import Field, field_validator

from rag_assets.lib.retrieve.external.hits import (
    Ask,
    Embed,
    ExternalRetrieverError,
    Hit,
    QueryFailed,
    QueryLimits,
    hits_from_answer,
)
from rag_assets.lib.retrieve.external.kinds.base import IN_FLIGHT, ExternalSpec
from rag_assets.lib.store.team_database import masked_url as masked


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(
        parts.scheme.lower())


class SameOrigin(urllib.request.HTTPRedirectHandler):
    """A redirect is followed only to the same origin and only when it keeps the request as it was (307 and 308:
    the method and the body): the entry's headers never go to another host, and a POST never silently becomes a
    GET without its query."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        target = urllib.parse.urljoin(req.full_url, newurl)
        if origin(target) != origin(req.full_url):
            raise QueryFailed(f"the service redirected ({code}) to another origin, {masked(target)}: not followed, "
                              "the entry's headers are never sent elsewhere")
        if code not in (307, 308):
            raise QueryFailed(f"the service redirected ({code}) to {masked(target)}, which would turn the "
                              f"{req.get_method()} into a GET without its query: not followed")
        return urllib.request.Request(target, data=req.data, headers=dict(req.header_items()), method=req.get_method())


def read_bounded(response, limits: QueryLimits, started: float) -> bytes:
    """An answer read a piece at a time, refused once it passes ``max_answer_bytes`` or the deadline (so a
    flood or a trickle stops here, not when it ends)."""
    chunks, size = [], 0
    while True:
        chunk = response.read1(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limits.max_answer_bytes:
            raise QueryFailed(f"an answer over the {limits.max_answer_bytes:,}-byte limit: not read further")
        if time.monotonic() - started > limits.deadline_seconds:
            raise QueryFailed(f"no whole answer within the {limits.deadline_seconds:g}-second deadline of a query "
                              f"({size:,} bytes arrived)")
        chunks.append(chunk)


class HttpEntry(ExternalSpec):
    """``{"key": "prod", "kind": "http", "url": "https://...", "headers": {"Authorization": "PROD_TOKEN"}}``:
    ``timeout`` seconds per read, at most ``in_flight`` requests at once, ``retries`` with exponential
    backoff on 429 and 5xx, all within a query's deadline; ``index_version_url`` answers a GET (with the
    entry's headers) with ``{"version": ...}``. Only http and https URLs; a redirect is followed only to the
    same origin, keeping the method and the body (``SameOrigin``)."""

    kind: Literal["http"]
    url: str
    headers: dict[str, str] = {}  # header -> the environment variable holding its value
    timeout: float = Field(10.0, gt=0, le=3600, strict=True)
    in_flight: int = IN_FLIGHT
    retries: int = Field(3, ge=0, le=10, strict=True)
    index_version_url: str | None = None

    @field_validator("url", "index_version_url")
    @classmethod
    def _http_only(cls, url: str | None) -> str | None:
        if url is not None and urllib.parse.urlsplit(url).scheme.lower() not in ("http", "https"):
            raise ValueError(f"{masked(url)!r} is not an http or https URL (an http retriever asks a service, never a "
                             "file or another scheme)")
        return url

    def variables(self) -> list[str]:
        return list(self.headers.values())

    def in_flight_queries(self) -> int:
        return self.in_flight

    def describe(self) -> dict:
        shown = super().describe()
        for name in ("url", "index_version_url"):
            if shown.get(name):
                shown[name] = masked(shown[name])
        return shown

    def _headers(self, environ: Mapping[str, str]) -> dict[str, str]:
        missing = [variable for variable in self.headers.values() if variable not in environ]
        if missing:
            raise ExternalRetrieverError(f"retriever {self.key!r}: the environment variable(s) {', '.join(missing)} "
                                         "its headers are read from are not set")
        return {header: environ[variable] for header, variable in self.headers.items()}

    def reported_version(self, environ: Mapping[str, str] | None = None,
                         limits: QueryLimits = QueryLimits()) -> str | None:
        if not self.index_version_url:
            return None
        opener = urllib.request.build_opener(SameOrigin)
        request = urllib.request.Request(self.index_version_url, headers=self._headers(environ or {}), method="GET")
        started = time.monotonic()
        try:
            with opener.open(request, timeout=min(self.timeout, limits.deadline_seconds)) as response:
                return str(json.loads(read_bounded(response, limits, started)).get("version"))
        except QueryFailed as failure:
            raise ExternalRetrieverError(f"retriever {self.key!r}: its index_version_url: {failure}") from None

    def search_url(self) -> str:
        """Where a query is POSTed."""
        return self.url

    def request_body(self, query: str, k: int, embed: Embed | None) -> dict:
        """What is POSTed for one query."""
        return {"query": query, "k": k}

    def hits_of(self, answer: Any, where: str) -> list[Hit]:
        """The hits of one answer, best first; ExternalRetrieverError naming ``where`` when it has none."""
        return hits_from_answer(answer, where)

    def asker(self, embed: Embed | None, environ: Mapping[str, str], limits: QueryLimits = QueryLimits()) -> Ask:
        """POST ``request_body`` to ``search_url`` with retries and backoff on 429 and 5xx, within the query's
        deadline and answer size; the headers' values from ``environ``; the answer read by ``hits_of``."""
        headers = {"Content-Type": "application/json", **self._headers(environ)}
        url, timeout, retries, where = self.search_url(), self.timeout, self.retries, f"retriever {self.key!r}"
        opener = urllib.request.build_opener(SameOrigin)

        def ask(query: str, k: int) -> list[Hit]:
            body = json.dumps(self.request_body(query, k, embed)).encode("utf-8")
            started = time.monotonic()
            for attempt in range(retries + 1):
                left = limits.deadline_seconds - (time.monotonic() - started)
                if left <= 0:
                    raise QueryFailed(f"no answer within the {limits.deadline_seconds:g}-second deadline of a query")
                request = urllib.request.Request(url, data=body, headers=headers, method="POST")
                try:
                    with opener.open(request, timeout=min(timeout, left)) as response:
                        payload = read_bounded(response, limits, started)
                except urllib.error.HTTPError as error:
                    if (error.code == 429 or error.code >= 500) and attempt < retries:
                        time.sleep(min(8.0, 0.2 * 2 ** attempt, max(0.0, left / 2)) * (1 + random.random() / 4))
                        continue
                    raise QueryFailed(f"HTTP {error.code}") from None
                except (TimeoutError, OSError) as error:
                    reason = getattr(error, "reason", error)
                    if isinstance(reason, QueryFailed):
                        raise reason from None
                    raise QueryFailed(f"timed out after {min(timeout, left):g} s" if "timed out" in str(reason) else
                                      f"no answer ({reason})") from None
                try:
                    return self.hits_of(json.loads(payload), where)
                except json.JSONDecodeError as error:
                    raise QueryFailed(f"the answer is not JSON ({error.msg} at character {error.pos})") from None
                except ExternalRetrieverError as error:
                    raise QueryFailed(str(error)) from None
            raise QueryFailed("no answer")  # not reached: the last attempt returns or raises
        return ask
