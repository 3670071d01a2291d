"""Kind ``http``: a search service. Each query is POSTed as ``{"query": ..., "k": ...}``; the answer is
``{"hits": [{"text": ..., "doc_id": ..., "score": ..., "distance": ..., "metadata": ...}]}`` (only ``text``
is required). A header's value comes from the environment variable the entry names, passed in by the
caller, so a token is never written in the file, nor in metadata, logs or DuckDB."""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.request
from typing import Literal, Mapping

from rag_assets.lib.retrieve.external.hits import Ask, Embed, ExternalRetrieverError, Hit, QueryFailed, hits_from_answer
from rag_assets.lib.retrieve.external.kinds.base import ExternalSpec


class HttpEntry(ExternalSpec):
    """``{"key": "prod", "kind": "http", "url": "https://...", "headers": {"Authorization": "PROD_TOKEN"}}``:
    ``timeout`` seconds per request, at most ``in_flight`` requests at once, ``retries`` with exponential
    backoff on 429 and 5xx; ``index_version_url`` answers a GET with ``{"version": ...}``."""

    kind: Literal["http"]
    url: str
    headers: dict[str, str] = {}  # header -> the environment variable holding its value
    timeout: float = 10.0
    in_flight: int = 4
    retries: int = 3
    index_version_url: str | None = None

    def variables(self) -> list[str]:
        return list(self.headers.values())

    def in_flight_queries(self) -> int:
        return self.in_flight

    def reported_version(self) -> str | None:
        if not self.index_version_url:
            return None
        with urllib.request.urlopen(self.index_version_url, timeout=self.timeout) as response:
            return str(json.loads(response.read()).get("version"))

    def asker(self, embed: Embed | None, environ: Mapping[str, str]) -> Ask:
        """POST ``{"query", "k"}`` with retries and backoff on 429 and 5xx; the headers' values from ``environ``."""
        missing = [variable for variable in self.headers.values() if variable not in environ]
        if missing:
            raise ExternalRetrieverError(f"retriever {self.key!r}: the environment variable(s) {', '.join(missing)} "
                                         "its headers are read from are not set")
        headers = {"Content-Type": "application/json",
                   **{header: environ[variable] for header, variable in self.headers.items()}}
        url, timeout, retries, where = self.url, self.timeout, self.retries, f"retriever {self.key!r}"

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
                    return hits_from_answer(json.loads(payload), where)
                except json.JSONDecodeError as error:
                    raise QueryFailed(f"the answer is not JSON ({error.msg} at character {error.pos})") from None
                except ExternalRetrieverError as error:
                    raise QueryFailed(str(error)) from None
            raise QueryFailed("no answer")  # not reached: the last attempt returns or raises
        return ask
