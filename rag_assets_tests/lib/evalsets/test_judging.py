from rag_assets.lib.evalsets.judging import document_ranking, judge
from rag_assets.lib.evalsets.queries import Query

CHUNK_DOC = {"a1": "A", "a2": "A", "b1": "B", "c1": "C"}


def test_judge_a_needle_query_by_the_chunks_that_hold_it():
    query = Query("n:doc", "n", "doc", "?", spans=(("A", "x"),))
    # holders a2 and b1... the list ranks a1, a2, c1, b1: holders land at 2 and 4
    assert judge(query, ["a1", "a2", "c1", "b1"], {"a2", "b1"}, CHUNK_DOC) == {
        "hit_rank": 2, "relevant_ranks": [2, 4], "relevant_total": 2}
    # a miss is a null rank, kept
    assert judge(query, ["a1", "c1"], {"a2"}, CHUNK_DOC) == {"hit_rank": None, "relevant_ranks": [], "relevant_total": 1}


def test_judge_a_document_query_on_ranks_rolled_up_by_best_chunk():
    query = Query("q", None, "query", "?", query_kind="document", relevant_doc_ids=("B", "C"))
    # chunks a1, a2, b1, c1 roll up to documents A (1), B (2), C (3)
    assert document_ranking(["a1", "a2", "b1", "c1"], CHUNK_DOC) == ["A", "B", "C"]
    assert judge(query, ["a1", "a2", "b1", "c1"], set(), CHUNK_DOC) == {
        "hit_rank": 2, "relevant_ranks": [2, 3], "relevant_total": 2}


def test_judge_out_of_domain_has_nothing_to_find():
    query = Query("o1", None, "out_of_domain", "?", query_kind="out_of_domain")
    assert judge(query, ["a1"], set(), CHUNK_DOC) == {"hit_rank": None, "relevant_ranks": [], "relevant_total": 0}


def test_span_holders_at_the_edges_of_what_they_are_given():
    from rag_assets.lib.evalsets.judging import chunks_by_document, span_holders

    text = "The needle sentence. Then the rest of the page."
    chunks = [{"chunk_id": "late", "doc_id": "d", "start": 21, "end": len(text)},
              {"chunk_id": "whole", "doc_id": "d", "start": 0, "end": len(text)}]
    by_doc = chunks_by_document(chunks)
    assert span_holders([("d", "The needle sentence.")], by_doc, {"d": text}) == {"whole"}  # from span_start only
    assert span_holders([("gone", "The needle sentence.")], by_doc, {"d": text}) == set()  # a page with no chunks
    # a page whose text was not extracted (failed) holds nothing, even with chunk rows left for it
    assert span_holders([("d", "The needle sentence.")], by_doc, {}) == set()
    # an extracted page with no chunks (headings only, say) holds nothing either
    assert span_holders([("bare", "Heading")], by_doc, {"d": text, "bare": "Heading"}) == set()
    # a span of a failed page before one of a good page: the good one is still judged
    assert span_holders([("failed", "x"), ("d", "The needle sentence.")], by_doc, {"d": text}) == {"whole"}


# A page as the extractor leaves it: a heading line, then two paragraphs of its section's body.
PAGE = "Kettle care\n\nDescale the kettle every month. Vinegar works well.\n\nRinse it twice before use."
BODY_START = PAGE.index("Descale")


def _chunks(strategy):
    from rag_assets.lib.ingest.canonical import Section
    from rag_assets.lib.ingest.chunking import chunk_document

    section = Section("Kettles > Kettle care", "Kettle care", 1, "care", BODY_START, len(PAGE))
    return [chunk.to_row() for chunk in chunk_document("k", "Kettles", PAGE, [section], strategy)]


def test_only_a_chunks_own_content_holds_a_needle_never_its_header_or_overlap_tail():
    from rag_assets.lib.evalsets.judging import chunks_by_document, span_holders
    from rag_assets.lib.ingest.chunking import Strategy

    # paragraph 1 in one chunk, paragraph 2 in the next, which embeds the last 40 characters of the first
    rows = _chunks(Strategy("f", target=60, overlap=40, boundaries=True, header=True))
    first, second = rows
    assert first["content"] == "Descale the kettle every month. Vinegar works well."
    assert second["content"] == "Rinse it twice before use."
    assert "Vinegar works well." in second["text"] and "Kettle care" in second["text"]  # tail and header embedded
    by_doc = chunks_by_document(rows)
    # a needle in the first chunk's content, carried whole in the second's overlap tail: the first holds it alone
    assert span_holders([("k", "Vinegar works well.")], by_doc, {"k": PAGE}) == {first["chunk_id"]}
    # the heading is copied into every chunk's header and is no chunk's content: nobody holds it
    assert span_holders([("k", "Kettle care")], by_doc, {"k": PAGE}) == set()
    assert span_holders([("k", "Rinse it twice before use.")], by_doc, {"k": PAGE}) == {second["chunk_id"]}


def test_a_needle_that_runs_past_a_chunks_end_is_held_by_no_chunk():
    from rag_assets.lib.evalsets.judging import chunks_by_document, needle_holders, span_holders
    from rag_assets.lib.evalsets.queries import Needle
    from rag_assets.lib.evaluate.chunk_quality import answers_destroyed

    text = "Alpha beta gamma. Delta epsilon zeta."
    cut = text.index("Delta")
    rows = [{"chunk_id": "one", "doc_id": "d", "start": 0, "end": cut, "span_start": 0},
            {"chunk_id": "two", "doc_id": "d", "start": cut, "end": len(text), "span_start": cut - 6}]
    by_doc = chunks_by_document(rows)
    # the needle starts exactly at the first chunk's end: only the second holds it
    assert span_holders([("d", "Delta epsilon zeta.")], by_doc, {"d": text}) == {"two"}
    # one that starts before the cut and ends after it is cut in two: no chunk holds it whole (the second's
    # overlap tail, from span_start, would reach back over the cut, and does not count)
    assert span_holders([("d", "gamma. Delta")], by_doc, {"d": text}) == set()
    holders = needle_holders([Needle("cut", "d", "gamma. Delta", {}), Needle("whole", "d", "Alpha beta", {})],
                             rows, {"d": text})
    assert holders == {"cut": set(), "whole": {"one"}} and answers_destroyed(holders) == ["cut"]


def test_an_item_of_no_known_document_keeps_its_rank_and_is_never_relevant():
    query = Query("q", None, "query", "?", query_kind="document", relevant_doc_ids=("B",))
    assert document_ranking(["x:unlocated:1", "b1"], CHUNK_DOC) == ["x:unlocated:1", "B"]
    assert judge(query, ["x:unlocated:1", "b1"], set(), CHUNK_DOC)["hit_rank"] == 2
