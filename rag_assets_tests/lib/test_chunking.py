import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.lib.chunking import STRATEGIES, Strategy, chunk_document, chunk_id
from rag_assets.lib.extraction import extract_document, extract_html

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
    assert chunk_id("d", "blind", 0, 10) == chunk_id("d", "blind", 0, 10)
    assert len({chunk_id("d", "blind", 0, 10), chunk_id("d", "blind", 0, 11), chunk_id("e", "blind", 0, 10),
                chunk_id("d", "other", 0, 10)}) == 4


paragraph = st.lists(st.text(alphabet="abcdefg", min_size=1, max_size=12), min_size=1, max_size=40).map(
    lambda ws: " ".join(ws) + "."
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(paragraph, st.just("HEADING")), min_size=1, max_size=30),
       st.sampled_from(list(STRATEGIES.values())), st.integers(min_value=20, max_value=200))
def test_offsets_slice_back_and_cover_every_character_once(blocks, base, target):
    markup = "<main>" + "".join("<h2>Part</h2>" if b == "HEADING" else f"<p>{b}</p>" for b in blocks) + "</main>"
    extracted = extract_html(markup.encode(), "Doc")
    strategy = Strategy(base.name, target=target, boundaries=base.boundaries, header=base.header)
    chunks = chunk_document("doc", extracted.title, extracted.text, extracted.sections, strategy)
    text = extracted.text
    covered = [0] * len(text)
    for chunk in chunks:
        assert text[chunk.start:chunk.end] == chunk.content
        assert chunk.content.strip()
        assert chunk.span_from == chunk.start
        assert len(chunk.content) <= target
        for i in range(chunk.start, chunk.end):
            covered[i] += 1
    if strategy.boundaries:  # every non-whitespace character of every section body exactly once
        for section in extracted.sections:
            for i in range(section.start, section.end):
                if not text[i].isspace():
                    assert covered[i] == 1
    else:  # every non-whitespace character of the document exactly once
        assert all(covered[i] == 1 for i in range(len(text)) if not text[i].isspace())
