"""A retrieval service that misbehaves, on loopback (rag_assets_tests/external_service.py): a redirect to another
origin never gets the entry's secret, a redirect that would turn the POST into a GET fails the query, a flood and
a trickle stop at the answer-size limit and the deadline, a Python retriever that sleeps is held to the same
deadline, the index version is asked with the entry's headers, and a token in a URL is never shown."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from rag_assets.lib.retrieve.external import (
    ExternalRetrieverError,
    QueryLimits,
    ask_all,
    asker,
    index_version,
    spec_from,
)
from rag_assets_tests.servers import RetrievalService

pytestmark = pytest.mark.servers


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    server = RetrievalService(tmp_path_factory.mktemp("service") / "uvicorn.log")
    yield server
    server.stop()


def http(service, path: str, **options):
    return spec_from({"key": "prod", "kind": "http", "url": f"{service.url}{path}",
                      "headers": {"Authorization": "PROD_TOKEN"}, "retries": 0, **options})


def environ(service) -> dict[str, str]:
    return {"PROD_TOKEN": f"Bearer {service.token}"}


def one(service, path: str, limits: QueryLimits = QueryLimits(), **options):
    [answered] = ask_all(asker(http(service, path, **options), environ=environ(service), limits=limits),
                         [("q", "kettle descaling")], 5)
    return answered


def test_a_redirect_to_another_origin_is_not_followed_and_gets_no_secret(service):
    answered = one(service, "/redirect-away")
    assert answered.hits == [] and answered.error.startswith("the service redirected (302) to another origin, "
                                                             "http://localhost:")
    with urllib.request.urlopen(f"{service.url}/captured") as response:
        assert json.loads(response.read())["requests"] == []  # nothing reached the other origin


def test_a_redirect_that_turns_the_post_into_a_get_fails_and_a_307_on_the_same_origin_is_followed(service):
    answered = one(service, "/redirect-get")
    assert answered.hits == [] and "would turn the POST into a GET without its query: not followed" in answered.error
    kept = one(service, "/redirect-keep")
    assert kept.error is None and kept.hits  # the same request, method, body and token, at /search


def test_a_flood_stops_at_the_answer_size_limit(service):
    started = time.monotonic()
    answered = one(service, "/flood", QueryLimits(deadline_seconds=60, max_answer_bytes=2 * 1024 * 1024))
    assert answered.hits == [] and answered.error.startswith("an answer over the 2,097,152-byte limit")
    assert time.monotonic() - started < 30  # (a bound far above what it takes, not a timing test: 100 MB unread)


def test_a_trickle_stops_at_the_deadline_whatever_the_timeout_per_read(service):
    answered = one(service, "/trickle", QueryLimits(deadline_seconds=2, max_answer_bytes=10**6), timeout=3)
    assert answered.hits == [] and "deadline of a query" in answered.error and answered.latency_ms < 20_000


def sleeper(query: str, k: int) -> list[dict]:
    time.sleep(3600)
    return []


def test_a_python_retriever_that_sleeps_is_held_to_the_deadline():
    spec = spec_from({"key": "mine", "kind": "python", "target": f"{__name__}:sleeper"})
    [answered] = ask_all(asker(spec, limits=QueryLimits(deadline_seconds=1)), [("q", "anything")], 5)
    assert answered.hits == [] and answered.error == "no answer within the 1-second deadline of a query"


def big(query: str, k: int) -> list[dict]:
    return [{"text": "y" * 4096}]


def test_a_python_retrievers_answer_is_held_to_the_size_limit():
    spec = spec_from({"key": "mine", "kind": "python", "target": f"{__name__}:big"})
    [answered] = ask_all(asker(spec, limits=QueryLimits(max_answer_bytes=1024)), [("q", "anything")], 5)
    assert answered.error == "an answer of 4,096 bytes of text, over the 1,024-byte limit"


def test_the_index_version_is_asked_with_the_entrys_headers(service):
    spec = http(service, "/search", index_version_url=f"{service.url}/version-protected")
    assert index_version(spec, asker(spec, environ=environ(service)), environ(service)) == "v1"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x"])
def test_only_http_urls_are_accepted(url):
    with pytest.raises(ExternalRetrieverError, match="is not an http or https URL"):
        spec_from({"key": "prod", "kind": "http", "url": url})
    with pytest.raises(ExternalRetrieverError, match="is not an http or https URL"):
        spec_from({"key": "prod", "kind": "http", "url": "https://x", "index_version_url": url})


def test_a_token_in_a_url_is_masked_wherever_the_entry_is_described():
    spec = spec_from({"key": "prod", "kind": "http", "url": "https://user:hunter2@search.example/q?api_key=s3cret&k=5",
                      "index_version_url": "https://search.example/v?token=abc123"})
    shown = json.dumps(spec.describe())
    assert "s3cret" not in shown and "hunter2" not in shown and "abc123" not in shown
    assert "api_key=***" in shown and "k=5" in shown and "user:***@" in shown
