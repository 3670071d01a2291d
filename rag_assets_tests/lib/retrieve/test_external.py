"""External retrievers judged by the needle rule: the registry file, a real HTTP service (uvicorn on
loopback: a token, a slow answer, a 503 then success, malformed JSON), Python functions, LangChain and
LlamaIndex retriever objects, located hits, failures as data, credentials never written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.lib.evalsets.loading import load_eval_set
from rag_assets.lib.ingest.corpus import scan_corpus
from rag_assets.lib.ingest.documents import canonical_texts, extract_file
from rag_assets.lib.retrieve.external import (
    ExternalRetrieverError,
    ExternalSpec,
    Hit,
    Locator,
    ask_all,
    asker,
    external_rows,
    external_stamp,
    index_version,
    registry,
    spec_from,
    specs_from_file,
)
from rag_assets_tests.conftest import FIXTURES
from rag_assets_tests.servers import RetrievalService

CORPUS = FIXTURES / "tiny_corpus"


@pytest.fixture(scope="module")
def documents() -> dict[str, str]:
    return canonical_texts([extract_file(CORPUS, e.path, e.format, e.sha256, 10**7) for e in scan_corpus(CORPUS, {})])


@pytest.fixture(scope="module")
def eval_rows() -> list[dict]:
    return load_eval_set(FIXTURES / "tiny_needles.jsonl", FIXTURES / "tiny_out_of_domain.jsonl").rows


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    server = RetrievalService(tmp_path_factory.mktemp("service") / "uvicorn.log")
    yield server
    server.stop()


def entry_file(tmp_path: Path, *entries: dict) -> Path:
    path = tmp_path / "retrievers.json"
    path.write_text(json.dumps(list(entries)), encoding="utf-8")
    return path


@pytest.mark.parametrize(("entry", "said"), [
    ({"key": "prod", "kind": "grpc"}, "kind 'grpc'; use one of http, python, chroma, lancedb"),
    ({"key": "../prod", "kind": "http", "url": "http://x"}, "the retriever key '../prod'"),
    ({"key": "prod", "kind": "http"}, "missing field(s) url"),
    ({"key": "prod", "kind": "http", "url": "http://x", "colour": 1}, "unknown field(s) colour"),
    ({"key": "prod", "kind": "http", "url": "http://x", "headers": {"Authorization": 5}}, "headers must map"),
], ids=["kind", "key", "missing", "unknown", "headers"])
def test_a_faulty_retrievers_file_names_the_entry_and_field(tmp_path, entry, said):
    with pytest.raises(ExternalRetrieverError, match="entry 1") as raised:
        specs_from_file(entry_file(tmp_path, entry))
    assert said in str(raised.value)


def test_a_field_of_the_wrong_type_is_named_with_its_value_and_the_entry_is_one_of_the_kinds(tmp_path):
    with pytest.raises(ExternalRetrieverError) as raised:
        specs_from_file(entry_file(tmp_path, {"key": "prod", "kind": "http", "url": "http://x", "timeout": "soon"}))
    assert str(raised.value).startswith(f"retrievers file {tmp_path / 'retrievers.json'}, entry 1 (key 'prod'): "
                                        "timeout is 'soon'")
    with pytest.raises(ExternalRetrieverError, match="entry 2: key 'prod' is registered twice"):
        specs_from_file(entry_file(tmp_path, *[{"key": "prod", "kind": "python", "target": "m:f"}] * 2))
    assert [type(spec).__name__ for spec in specs_from_file(entry_file(tmp_path, *[
        {"key": "a", "kind": "http", "url": "http://x"}, {"key": "b", "kind": "python", "target": "m:f"},
        {"key": "c", "kind": "chroma", "collection": "docs"},
        {"key": "d", "kind": "lancedb", "uri": "/l", "table": "t", "model": "wordllama"}])).values()] == [
        "HttpEntry", "PythonEntry", "ChromaEntry", "LanceDBEntry"]


def test_the_registry_reads_the_file_it_is_given_and_none_for_no_file(tmp_path):
    assert registry("") == {}
    path = entry_file(tmp_path, {"key": "prod", "kind": "http", "url": "http://x"})
    assert list(registry(path)) == ["prod"] and registry(str(path))["prod"].timeout == 10.0  # the default
    with pytest.raises(ExternalRetrieverError, match=f"retrievers file {tmp_path / 'absent.json'}: "):
        registry(tmp_path / "absent.json")


def test_a_header_variable_the_caller_did_not_pass_is_named_before_any_query(service):
    with pytest.raises(ExternalRetrieverError, match="the environment variable.s. PROD_TOKEN its headers"):
        asker(http(service), environ={})


def judged(spec: ExternalSpec, eval_rows, documents, environ=None):
    answered = ask_all(asker(spec, environ=environ), [(r["query_id"], r["question"]) for r in eval_rows], 5, 4)
    return external_rows(spec.key, answered, eval_rows, documents, external_stamp(spec.key, "v1", "s", "2"))


def http(service, path: str = "/search", **options) -> ExternalSpec:
    return spec_from({"key": "prod", "kind": "http", "url": f"{service.url}{path}",
                      "headers": {"Authorization": "PROD_TOKEN"}, **options})


def token(service, value: str | None = None) -> dict[str, str]:
    """The header variable's value, as a caller passes it in (lib never reads the environment)."""
    return {"PROD_TOKEN": value or f"Bearer {service.token}"}


@pytest.mark.servers
def test_an_http_retriever_is_judged_by_the_needle_rule_with_located_hits(service, eval_rows, documents):
    rows, figures = judged(http(service), eval_rows, documents, token(service))
    assert figures["errors"] == 0 and figures["queries"] == len(eval_rows)
    needle_rows = [r for r in rows if r["query_kind"] == "needle"]
    assert sum(r["hit_rank"] is not None for r in needle_rows) >= len(needle_rows) // 2  # the service finds most
    for row in rows:
        assert all(ratio == 1.0 for ratio in row["located_ratios"])  # the service returns corpus paragraphs
        assert all("#char=" in hit for hit in row["chunk_ids"])
    # the rule itself: a hit is correct exactly when it holds the needle, in the needle's document
    needles = {json.loads(line)["id"]: json.loads(line) for line in (FIXTURES / "tiny_needles.jsonl").read_text().splitlines()}
    for row in needle_rows:
        needle = needles[row["needle_id"]]
        holds = [i for i, hit in enumerate(row["chunk_ids"], 1) if hit.startswith(needle["doc_id"] + "#")
                 and needle["needle"] in documents[needle["doc_id"]][int(hit.split("=")[1].split(",")[0]):
                                                                    int(hit.split(",")[1])]]
        assert row["hit_rank"] == (holds[0] if holds else None), row["query_id"]
    assert service.token not in json.dumps(rows) + json.dumps(figures) + json.dumps(http(service).describe())
    assert http(service).describe()["headers"] == {"Authorization": "$PROD_TOKEN"}


@pytest.mark.servers
def test_http_failures_are_data_and_too_many_fail_the_run_in_one_paragraph(service, eval_rows, documents):
    with pytest.raises(ExternalRetrieverError) as raised:
        judged(http(service, retries=0), eval_rows, documents, token(service, "Bearer wrong"))
    said = str(raised.value)
    assert said.startswith("retriever 'prod' failed 8 of 8 queries") and "8 x HTTP 401" in said and "for example" in said
    assert "wrong" not in said
    environ = token(service)
    with pytest.raises(ExternalRetrieverError, match="timed out after 0.5 s"):
        judged(http(service, "/slow", timeout=0.5, retries=0), eval_rows, documents, environ)
    rows, figures = judged(http(service, "/flaky", retries=2), eval_rows, documents, environ)  # 503, then the answer
    assert figures["errors"] == 0
    with pytest.raises(ExternalRetrieverError, match="the answer is not JSON"):
        judged(http(service, "/malformed"), eval_rows, documents, environ)
    answered = ask_all(asker(http(service, "/slow", timeout=0.5, retries=0), environ=environ), [("q", "kettle")], 5)
    rows, _ = external_rows("prod", answered + ask_all(asker(http(service), environ=environ),
                                                       [(r["query_id"], r["question"]) for r in eval_rows[1:]], 5),
                            [eval_rows[0] | {"query_id": "q"}, *eval_rows[1:]], documents,
                            external_stamp("prod", "v1", "s", "2"))
    assert rows[0]["error"].startswith("timed out") and rows[0]["hit_rank"] is None and rows[0]["chunk_ids"] == []


@pytest.mark.servers
def test_the_index_version_is_what_the_service_says_or_a_hash_of_its_probe_answers(service):
    spec = http(service, index_version_url=f"{service.url}/version")
    assert index_version(spec, asker(spec, environ=token(service)), token(service)) == "v1"
    probed = index_version(http(service), asker(http(service), environ=token(service)))
    assert probed.startswith("probe-") and probed == index_version(http(service), asker(http(service),
                                                                                        environ=token(service)))


def _passages(documents):
    return [{"text": p, "doc_id": d} for d, text in sorted(documents.items()) for p in text.split("\n\n")]


def overlap_search(query: str, k: int) -> list[dict]:
    """A Python retriever: the tiny corpus's paragraphs by shared words (as the HTTP service ranks them)."""
    from rag_assets_tests.external_service import rank

    return rank(query, k)


def _langchain_retriever():
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class Overlap(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager=None):
            return [Document(page_content=h["text"], metadata={"doc_id": h["doc_id"], "score": h["score"]})
                    for h in overlap_search(query, 5)]

    return Overlap()


def _llamaindex_retriever():
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, TextNode

    class Overlap(BaseRetriever):
        def _retrieve(self, query_bundle):
            return [NodeWithScore(node=TextNode(text=h["text"], metadata={"doc_id": h["doc_id"]}), score=h["score"])
                    for h in overlap_search(query_bundle.query_str, 5)]

    return Overlap()


def test_python_functions_langchain_and_llamaindex_retrievers_give_the_same_rows(eval_rows, documents, monkeypatch):
    import sys
    import types

    module = types.ModuleType("team_retrievers")
    module.search, module.langchain, module.llamaindex = overlap_search, _langchain_retriever(), _llamaindex_retriever()
    monkeypatch.setitem(sys.modules, "team_retrievers", module)
    results = {}
    for target in ("search", "langchain", "llamaindex"):
        spec = spec_from({"key": "mine", "kind": "python", "target": f"team_retrievers:{target}"})
        rows, figures = judged(spec, eval_rows, documents)
        assert figures["errors"] == 0
        results[target] = [(r["query_id"], r["chunk_ids"], r["hit_rank"]) for r in rows]
    assert results["search"] == results["langchain"] == results["llamaindex"]
    with pytest.raises(ExternalRetrieverError, match="cannot import 'team_retrievers:nothing'"):
        asker(spec_from({"key": "mine", "kind": "python", "target": "team_retrievers:nothing"}))


def test_a_hit_is_located_exactly_approximately_or_not_at_all_and_only_a_located_hit_counts(documents):
    locator = Locator(documents)
    needle = "Fill the kettle halfway with equal parts white vinegar and water"
    exact = locator.locate(Hit(needle.replace(" ", "  \n ")))
    assert exact.doc_id == "guide/kettles.html" and exact.ratio == 1.0
    assert documents[exact.doc_id][exact.start:exact.end] == needle
    close = locator.locate(Hit(needle.replace("halfway", "half way")))  # re-chunked, re-spaced by another system
    assert close.doc_id == "guide/kettles.html" and 0.85 <= close.ratio < 1.0
    nowhere = locator.locate(Hit("An answer about submarines that no document of this corpus contains."))
    assert nowhere.doc_id is None
    from rag_assets.lib.retrieve.external import hit_holds

    spans = [("guide/kettles.html", needle)]
    assert hit_holds(Hit(needle), exact, spans) and not hit_holds(Hit(needle), nowhere, spans)


@pytest.mark.parametrize("passage", [
    "Descale the kettle every week with white wine vinegar and warm water, then rinse it twice.",  # a word more
    "To descale the kettle every week with white vinegar and warm water, then rinse it twice.",  # another start
])
def test_an_approximate_hit_is_placed_at_the_paragraph_it_matches_best_not_the_first_it_matches(passage):
    hit = Hit(passage)
    monthly = "Descale the kettle every month with white vinegar and cold water, then rinse it twice."
    weekly = "Descale the kettle every week with white vinegar and warm water, then rinse it twice."
    alone = {text: Locator({"page": text}).locate(hit) for text in (monthly, weekly)}
    assert 0.85 <= alone[monthly].ratio < alone[weekly].ratio < 1.0  # either would locate it; weekly is closer
    page = f"Kettles\n\nA kettle needs little care.\n\n{monthly}\n\nA teapot needs even less.\n\n{weekly}\n\nThat is all."
    located = Locator({"page": page}).locate(hit)
    at = page.index(weekly)  # placed in the page as in the weekly paragraph alone, with its ratio
    assert (located.start - at, located.end - at, located.ratio) == (alone[weekly].start, alone[weekly].end,
                                                                     alone[weekly].ratio)


def test_a_passage_is_not_located_by_letters_scattered_over_a_long_page():
    """Approximately located means a stretch of the page close to the passage, not its characters picked
    one by one from all over a page (any sentence is spelt out somewhere in two thousand characters)."""
    corpus = FIXTURES / "small_corpus"
    documents = canonical_texts([extract_file(corpus, e.path, e.format, e.sha256, 10**7)
                                 for e in scan_corpus(corpus, {})])
    assert max(len(text) for text in documents.values()) > 2000
    nowhere = Locator(documents).locate(Hit("An answer about submarines that no document of this corpus contains."))
    assert nowhere.doc_id is None and nowhere.ratio < 0.85


def test_a_run_fails_when_more_than_a_fifth_of_its_queries_erred_with_the_errors_by_kind():
    from rag_assets.lib.retrieve.external import Answered, failure_of

    def answers(errors: list[str | None]) -> list[Answered]:
        return [Answered(f"q{i}", [], 1.0, error) for i, error in enumerate(errors)]

    assert failure_of("team", answers([None] * 8 + ["HTTP 503"] * 2)) is None  # exactly a fifth: recorded
    assert failure_of("team", []) is None
    said = failure_of("team", answers([None] * 7 + ["HTTP 503"] + ["timed out after 2 s (read)"] * 2))
    assert said.startswith("retriever 'team' failed 3 of 10 queries (more than 20%): 2 x timed out after 2 s, "
                           "1 x HTTP 503; for example query q7: HTTP 503")


@pytest.mark.parametrize(("change", "said"), [
    ({"timeout": -1}, "timeout is -1: input should be greater than 0"),
    ({"timeout": 0}, "timeout is 0: input should be greater than 0"),
    ({"timeout": 1e9}, "timeout is 1000000000.0: input should be less than or equal to 3600"),
    ({"timeout": "10"}, "timeout is '10'"),
    ({"retries": -1}, "retries is -1: input should be greater than or equal to 0"),
    ({"retries": 1.5}, "retries is 1.5"),
    ({"in_flight": 0}, "in_flight is 0: input should be greater than or equal to 1"),
    ({"in_flight": 10**6}, "in_flight is 1000000: input should be less than or equal to 64"),
    ({"in_flight": True}, "in_flight is True"),
], ids=["negative-timeout", "zero-timeout", "huge-timeout", "text-timeout", "negative-retries", "fraction-retries",
        "no-in-flight", "huge-in-flight", "boolean-in-flight"])
def test_an_entry_number_out_of_its_range_is_named_with_its_value(tmp_path, change, said):
    with pytest.raises(ExternalRetrieverError, match=r"entry 1 \(key 'prod'\): ") as raised:
        specs_from_file(entry_file(tmp_path, {"key": "prod", "kind": "http", "url": "http://x"} | change))
    assert said in str(raised.value), raised.value


def test_the_bounds_hold_for_every_kind_that_has_them(tmp_path):
    for entry in ({"key": "prod", "kind": "python", "target": "m:f", "in_flight": 0},
                  {"key": "prod", "kind": "chroma", "collection": "c", "port": 70000}):
        with pytest.raises(ExternalRetrieverError, match="entry 1"):
            specs_from_file(entry_file(tmp_path, entry))
    assert specs_from_file(entry_file(tmp_path, {"key": "ok", "kind": "http", "url": "http://x", "timeout": 2.5,
                                                 "retries": 0, "in_flight": 64}))["ok"]


def test_a_retrievers_file_that_is_not_utf8_is_named_with_its_line_and_byte(tmp_path):
    path = tmp_path / "retrievers.json"
    path.write_bytes(b'[\n  {"key": "a\xff"}]')
    with pytest.raises(ExternalRetrieverError, match=rf"retrievers file {path}: not UTF-8 \(line 2, byte 14\)"):
        specs_from_file(path)
