import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.lib.ingest.canonical import CanonicalBuilder
from rag_assets.lib.ingest.chunking import (
    STRATEGIES,
    Strategy,
    chunk_document,
    chunk_id,
    header_of,
)
from rag_assets.lib.ingest.extraction import extract_document, extract_html

DOC = "Title\n\nFirst paragraph is short.\n\nSecond one. It has two sentences!\n\nThird."


def _sections(text):
    return extract_document(text.encode(), "text", "Title").sections


def test_blind_cuts_at_exact_multiples_of_the_target():
    text = "x" * 25
    chunks = chunk_document("d", "T", text, _sections(text), Strategy("blind", target=10))
    assert [(c.start, c.end) for c in chunks] == [(0, 10), (10, 20), (20, 25)]
    assert all(c.text == c.content for c in chunks)


def test_boundaries_never_cut_a_paragraph_that_fits():
    # Plain text has no headings: one section holding paragraphs [0:5) "Title", [7:32) 25 chars,
    # [34:67) 33 chars and [69:75) 6 chars. With a target of 40 the first two pack (32 <= 40), the
    # third would make 67 > 40 so it opens a chunk, and the fourth would make 75 - 34 = 41 > 40.
    chunks = chunk_document("d", "Title", DOC, _sections(DOC), Strategy("c", target=40, boundaries=True))
    assert [c.content for c in chunks] == [
        "Title\n\nFirst paragraph is short.", "Second one. It has two sentences!", "Third."]


def test_boundaries_pack_paragraphs_up_to_the_target():
    chunks = chunk_document("d", "Title", DOC, _sections(DOC), Strategy("c", target=200, boundaries=True))
    assert len(chunks) == 1
    assert chunks[0].content == DOC


def test_oversized_paragraph_splits_at_sentence_ends():
    text = "One two three. Four five six? Seven eight nine!"
    chunks = chunk_document("d", "T", text, _sections(text), Strategy("c", target=20, boundaries=True))
    assert [c.content for c in chunks] == ["One two three.", "Four five six?", "Seven eight nine!"]


def test_code_without_sentence_ends_splits_at_lines():
    text = "\n".join(f"line_{i} = {i}" for i in range(6))  # 6 lines of 10-11 characters
    chunks = chunk_document("d", "T", text, [], Strategy("c", target=25, boundaries=True))
    assert chunks == []  # no section: boundary strategies chunk sections only
    sections = extract_html(f"<main><pre>{text}</pre></main>".encode(), "T").sections
    chunks = chunk_document("d", "T", text, sections, Strategy("c", target=25, boundaries=True))
    assert [c.content for c in chunks] == ["line_0 = 0\nline_1 = 1", "line_2 = 2\nline_3 = 3", "line_4 = 4\nline_5 = 5"]


def test_header_is_title_and_section_path_and_not_content(tiny_corpus):
    extracted = extract_document((tiny_corpus / "guide/kettles.html").read_bytes(), "html", "k")
    chunks = chunk_document("guide/kettles.html", extracted.title, extracted.text, extracted.sections,
                            STRATEGIES["boundaries_header"])
    descaling = [c for c in chunks if c.section == "Kettle Care > Descaling"]
    assert descaling
    for chunk in descaling:
        assert chunk.text == "[Kettle Care > Descaling]\n" + chunk.content
        assert "Descaling" not in chunk.content


def test_chunk_ids_are_stable_and_distinct():
    # pinned: stored retrieval rows, caches and traces name chunks by these ids across processes and releases
    assert chunk_id("d", "blind", 0, 10) == "57fc1aa7756cf5139516"
    assert chunk_id("tutorial/controlflow.html", "boundaries_header", 1024, 1536) == "876813296228b6a770a9"
    assert len({chunk_id("d", "blind", 0, 10), chunk_id("d", "blind", 0, 11), chunk_id("e", "blind", 0, 10),
                chunk_id("d", "other", 0, 10)}) == 4


def test_six_strategies_from_three_ingredients_and_the_whole_document():
    assert {name: (s.boundaries, s.overlap, s.header, s.target, s.whole) for name, s in STRATEGIES.items()} == {
        "blind": (False, 0, False, 512, False),
        "blind_overlap": (False, 64, False, 512, False),
        "boundaries": (True, 0, False, 512, False),
        "boundaries_overlap": (True, 64, False, 512, False),
        "boundaries_header": (True, 0, True, 512, False),
        "boundaries_header_overlap": (True, 64, True, 512, False),
        "document": (False, 0, False, 512, True),
    }


def test_the_document_strategy_is_one_chunk_of_the_whole_canonical_text():
    builder = CanonicalBuilder()
    builder.add_heading(1, "Vinegar descaling", None)
    builder.add("Fill the kettle halfway. " * 40)
    extracted = builder.build(None, "fallback")
    [chunk] = chunk_document("k.html", extracted.title, extracted.text, extracted.sections, STRATEGIES["document"])
    assert chunk.content == chunk.text == extracted.text  # the title, a blank line, the text
    assert (chunk.start, chunk.end, chunk.span_start, chunk.section) == (0, len(extracted.text), 0, "Vinegar descaling")
    assert chunk_document("e.txt", "t", "", [], STRATEGIES["document"]) == []


def test_blind_overlap_carries_exactly_the_last_characters_of_the_previous_chunk():
    text = "".join(chr(ord("a") + i % 26) for i in range(25))
    chunks = chunk_document("d", "T", text, _sections(text), Strategy("b", target=10, overlap=4))
    # contents [0:10) [10:20) [20:25); each later chunk embeds the last 4 characters of the one before
    assert [(c.span_start, c.start, c.end) for c in chunks] == [(0, 0, 10), (6, 10, 20), (16, 20, 25)]
    assert chunks[1].text == text[6:10] + chunks[1].content == "ghij" + "klmnopqrst"
    assert chunks[2].text == chunks[1].content[-4:] + chunks[2].content


def test_boundary_overlap_stays_in_its_section_and_keeps_the_separator(tiny_corpus):
    extracted = extract_document((tiny_corpus / "guide/kettles.html").read_bytes(), "html", "k")
    strategy = Strategy("f", target=120, overlap=64, boundaries=True, header=True)
    chunks = chunk_document("k", extracted.title, extracted.text, extracted.sections, strategy)
    by_section: dict[str, list] = {}
    for chunk in chunks:
        by_section.setdefault(chunk.section, []).append(chunk)
    for section_chunks in by_section.values():
        first, *rest = section_chunks
        assert first.span_start == first.start  # no overlap across a section boundary
        for previous, chunk in zip(section_chunks, rest):
            tail = previous.content[-64:]
            assert chunk.span_start == previous.end - len(tail)
            # header, then the tail, the document's own separator, then the content
            assert chunk.text == f"[{chunk.section}]\n" + tail + extracted.text[previous.end:chunk.start] + chunk.content
            assert header_of(chunk) == f"[{chunk.section}]\n"
    assert any(len(section_chunks) > 1 for section_chunks in by_section.values())


def test_overlap_must_be_smaller_than_the_target():
    with pytest.raises(ValueError, match="overlap < target"):
        Strategy("bad", target=64, overlap=64)


paragraph = st.lists(st.text(alphabet="abcdefg", min_size=1, max_size=12), min_size=1, max_size=40).map(
    lambda ws: " ".join(ws) + "."
)


def _section_index(extracted, chunk):
    return next(i for i, s in enumerate(extracted.sections) if s.start <= chunk.start < s.end)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(paragraph, st.just("HEADING")), min_size=1, max_size=30),
       st.sampled_from(list(STRATEGIES.values())), st.integers(min_value=20, max_value=200),
       st.integers(min_value=0, max_value=19))
def test_offsets_slice_back_and_cover_every_character_once(blocks, base, target, overlap):
    """Every registered strategy (its other fields kept, target and overlap drawn): contents slice back out
    of the text, and cover every character they must exactly once; a strategy that drops text fails."""
    from dataclasses import replace

    markup = "<main>" + "".join("<h2>Part</h2>" if b == "HEADING" else f"<p>{b}</p>" for b in blocks) + "</main>"
    extracted = extract_html(markup.encode(), "Doc")
    strategy = replace(base, target=target, overlap=overlap if base.overlap else 0)
    chunks = chunk_document("doc", extracted.title, extracted.text, extracted.sections, strategy)
    text = extracted.text
    # chunks exactly when there are words to hold: section bodies for the boundary strategies (a heading is never
    # content), the whole text for the others
    bodies = "".join(text[s.start:s.end] for s in extracted.sections) if strategy.boundaries else text
    assert bool(chunks) == bool(bodies.strip())
    if strategy.whole:  # the whole document, one chunk, however long
        assert [(c.start, c.end, c.span_start, c.content, c.text) for c in chunks] == [(0, len(text), 0, text, text)]
    covered = [0] * len(text)
    previous = None
    for chunk in chunks:
        assert text[chunk.start:chunk.end] == chunk.content
        assert chunk.content.strip()
        assert len(chunk.content) <= target or strategy.whole
        assert chunk.text == header_of(chunk) + text[chunk.span_start:chunk.end]
        assert header_of(chunk) == (f"[{chunk.section}]\n" if strategy.header else "")
        same_run = previous is not None and (not strategy.boundaries or _section_index(extracted, previous)
                                             == _section_index(extracted, chunk))
        if strategy.overlap and same_run:
            assert chunk.span_start == max(previous.start, previous.end - strategy.overlap)
        else:
            assert chunk.span_start == chunk.start
        previous = chunk
        for i in range(chunk.start, chunk.end):
            covered[i] += 1
    if strategy.boundaries:  # every non-whitespace character of every section body exactly once
        for section in extracted.sections:
            for i in range(section.start, section.end):
                if not text[i].isspace():
                    assert covered[i] == 1
        headings = [s for s in extracted.sections if s.heading]
        assert not any(c.content == s.heading for c in chunks for s in headings if s.heading == "Part")
    else:  # every non-whitespace character of the document exactly once
        assert all(covered[i] == 1 for i in range(len(text)) if not text[i].isspace())


def test_the_chunking_code_version_follows_every_strategy_definition(monkeypatch):
    """The code version of `chunks` (what makes its partitions unsynced) changes with any strategy's
    definition, not only with CHUNKER_VERSION."""
    from dataclasses import replace

    from rag_assets.lib.ingest import chunking

    before = chunking.chunking_code_version()
    assert before == chunking.chunking_code_version()
    monkeypatch.setitem(chunking.STRATEGIES, "blind", replace(chunking.STRATEGIES["blind"], target=256))
    changed_target = chunking.chunking_code_version()
    monkeypatch.setitem(chunking.STRATEGIES, "extra", replace(chunking.STRATEGIES["blind"], name="extra"))
    assert len({before, changed_target, chunking.chunking_code_version()}) == 3


def test_a_strategy_needs_a_positive_target_and_an_overlap_below_it():
    assert Strategy("one", target=1).target == 1
    for target, overlap in ((0, 0), (-5, 0), (10, 10), (10, -1)):
        with pytest.raises(ValueError, match=r"need target > 0 and 0 <= overlap < target"):
            Strategy("bad", target=target, overlap=overlap)


def test_chunk_ids_and_the_code_version_are_the_hashes_they_say():
    import hashlib

    from rag_assets.lib.ingest.chunking import CHUNKER_VERSION, chunking_code_version

    assert chunk_id("d.html", "blind", 0, 512) == hashlib.sha256(b"d.html\x00blind\x000\x00512").hexdigest()[:20]
    definition = CHUNKER_VERSION + repr(sorted((name, s.definition()) for name, s in STRATEGIES.items()))
    assert chunking_code_version() == f"{CHUNKER_VERSION}-{hashlib.sha256(definition.encode()).hexdigest()[:8]}"
    text = "x" * 25
    chunks = chunk_document("d", "T", text, _sections(text), Strategy("blind", target=10))
    assert [(c.chunk_id, c.strategy, c.doc_id) for c in chunks] == [
        (chunk_id("d", "blind", start, end), "blind", "d") for start, end in ((0, 10), (10, 20), (20, 25))]


def test_what_exactly_fits_the_target_is_not_cut():
    from rag_assets.lib.ingest.chunking import fit_spans, pack_spans

    # a second paragraph of exactly the target, far into the text: whole
    text = "a" * 30 + "\n\n" + "b" * 10
    assert list(fit_spans(text, 0, len(text), 10))[-1] == (32, 42)
    # ... even when it holds two sentences
    text = "a" * 30 + "\n\n" + "Bcd. Fghi."
    assert list(fit_spans(text, 0, len(text), 10))[-1] == (32, 42)
    # a paragraph over the target far into the text: its sentences, measured from their own start
    text = "Xx.\n\nAb. Cd. Ef."
    assert list(fit_spans(text, 0, len(text), 10)) == [(0, 3), (5, 8), (9, 12), (13, 16)]
    # a sentence of exactly the target inside a longer paragraph: whole; the next sentence on its own
    text = "Abcdefghi. Jklmnop."
    assert list(fit_spans(text, 0, len(text), 10)) == [(0, 10), (11, 19)]
    # a sentence longer than the target: cut at the target, the space after the cut skipped
    text = "abcde fghij"
    assert list(fit_spans(text, 0, len(text), 5)) == [(0, 5), (6, 11)]
    text = "abcdefghijklm"
    assert list(fit_spans(text, 0, len(text), 5)) == [(0, 5), (5, 10), (10, 13)]
    # a table row (a line: it ends at its newline) that ends in a space, cut: only the space is left after the cut,
    # and no empty span follows (packed, one would start a chunk at the space or stand alone)
    text = "| ab | \n| cd |"
    assert list(fit_spans(text, 0, len(text), 6)) == [(0, 6), (8, 14)]
    from rag_assets.lib.ingest.canonical import Section

    whole = [Section("T", None, 0, None, 0, len(text))]
    rows = chunk_document("t", "T", text, whole, Strategy("c", target=6, boundaries=True))
    assert [(c.start, c.end, c.content) for c in rows] == [(0, 6, "| ab |"), (8, 14, "| cd |")]
    # spans packed while their extent is at most the target, exactly the target included
    assert list(pack_spans([(0, 4), (6, 10), (12, 20)], 10)) == [(0, 10), (12, 20)]
    assert list(pack_spans([(0, 4), (6, 11)], 10)) == [(0, 4), (6, 11)]


def test_a_chunk_belongs_to_the_last_section_started_at_or_before_it():
    from rag_assets.lib.ingest.canonical import Section
    from rag_assets.lib.ingest.chunking import section_at

    sections = [Section("T > A", "A", 2, None, 10, 20), Section("T > B", "B", 2, None, 20, 30)]
    assert section_at(sections, 5, "T") == "T"  # before the first section: the document's title
    assert section_at(sections, 10, "T") == "T > A"  # exactly at a section's start: that section
    assert section_at(sections, 19, "T") == "T > A"
    assert section_at(sections, 20, "T") == "T > B"
    assert section_at(sections, 99, "T") == "T > B"


def test_blind_chunks_before_the_first_heading_carry_the_title():
    from rag_assets.lib.ingest.chunking import chunk_rows

    html = (b"<main><h1>Guide</h1><p>" + b"Intro words. " * 30 + b"</p><h2>Later</h2><p>" + b"More words. " * 30
            + b"</p></main>")
    extracted = extract_html(html, "fallback")
    assert extracted.title == "Guide" and extracted.sections[0].start > 0  # the title's line comes first
    row = {"doc_id": "g.html", "title": "Guide", "text": extracted.text, "status": "ok", "snapshot_id": "s",
           "extractor_version": "1", "sections": [vars(s) for s in extracted.sections]}
    rows = chunk_rows([row], Strategy("blind", target=100, header=True))
    assert rows[0]["section"] == "Guide" and rows[0]["text"].startswith("[Guide]\n")
    assert rows[-1]["section"].endswith("Later")


def test_a_size_in_tokens_holds_every_chunk_within_it_and_the_overlap_is_the_last_tokens(tiny_corpus):
    from rag_assets.lib.ingest.tokens import token_count, token_starts

    extracted = extract_document((tiny_corpus / "guide/kettles.html").read_bytes(), "html", "k")
    text = extracted.text
    for strategy in (Strategy("t", target=24, overlap=6, boundaries=True, unit="tokens"),
                     Strategy("b", target=24, overlap=6, unit="tokens")):
        chunks = chunk_document("k", extracted.title, text, extracted.sections, strategy)
        assert len(chunks) > 2
        for chunk in chunks:
            assert chunk.content == text[chunk.start:chunk.end] and token_count(chunk.content) <= 24
        with_tail = [c for c in chunks if c.span_start != c.start]
        assert with_tail
        for chunk in with_tail:
            previous = next(c for c in chunks if c.end <= chunk.start and c.start < chunk.span_start < c.end + 1)
            starts = token_starts(previous.content)
            assert chunk.span_start - previous.start == starts[len(starts) - 1 - 6]  # its last 6 tokens
    # the same strategy in characters cuts at characters: a different, longer-chunked partition
    in_characters = chunk_document("k", extracted.title, text, extracted.sections,
                                   Strategy("c", target=24, boundaries=True))
    assert max(len(c.content) for c in in_characters) <= 24


def test_token_starts_cut_between_characters_and_cover_the_text():
    from rag_assets.lib.ingest.tokens import count_tokens, token_starts

    for text in ("Héllo wörld: 日本語のテキスト, and emoji 🙂🙂.", "plain words only", ""):
        starts = token_starts(text)
        assert starts[0] == 0 and starts[-1] == len(text) and starts == sorted(set(starts))
        assert len(starts) - 1 <= max(count_tokens([text])[0], 1)
