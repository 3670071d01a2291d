import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.lib.ingest.corpus import scan_corpus
from rag_assets.lib.ingest.extraction import (
    ExtractionError,
    extract_document,
    extract_html,
)
from rag_assets.settings import DEFAULT_CORPUS_DIR

SPHINX_CHROME = ("Navigation", "Table of Contents", "Previous topic", "This Page", "Show Source",
                 "Quick search", "¶")


def test_html_fixture_canonical_text(tiny_corpus):
    extracted = extract_document((tiny_corpus / "guide/kettles.html").read_bytes(), "html", "kettles")
    assert extracted.title == "Kettle Care"
    paragraphs = extracted.text.split("\n\n")
    assert paragraphs[0] == "Kettle Care"
    # source line wrapping is folded away
    assert paragraphs[1] == "An electric kettle heats water quickly, but it needs care to last for many years."
    # code keeps its lines and indentation
    assert "vinegar = 0.5 litre\nwater   = 0.5 litre\n    boil(vinegar + water)" in paragraphs
    # a table row per line, cells joined by " | "
    assert "Symptom | Action\nCord is hot | Unplug at once" in paragraphs
    for chrome in SPHINX_CHROME + ("var navigation", "color: red"):
        assert chrome not in extracted.text


def test_sections_have_paths_anchors_and_exact_offsets(tiny_corpus):
    extracted = extract_document((tiny_corpus / "guide/kettles.html").read_bytes(), "html", "kettles")
    sections = {s.path: s for s in extracted.sections}
    assert list(sections) == ["Kettle Care", "Kettle Care > Descaling", "Kettle Care > Safety"]
    descaling = sections["Kettle Care > Descaling"]
    assert descaling.anchor == "descaling"
    assert descaling.heading == "Descaling"
    body = extracted.text[descaling.start:descaling.end]
    assert body.startswith("Hard water leaves")
    assert body.endswith("boil(vinegar + water)")
    assert "Descaling" not in body and "Safety" not in body


def test_page_header_and_footer_dropped_outside_main(tiny_corpus):
    extracted = extract_document((tiny_corpus / "toasters.html").read_bytes(), "html", "toasters")
    assert "Home" not in extracted.text and "Toaster Corp" not in extracted.text
    assert [s.anchor for s in extracted.sections] == ["toaster-guide", "crumbs", "settings"]


def test_plain_text_paragraphs(tiny_corpus):
    extracted = extract_document((tiny_corpus / "fridge-notes.txt").read_bytes(), "text", "fridge-notes")
    assert extracted.text.split("\n\n")[1].startswith("Keep the refrigerator between three and five degrees")
    assert extracted.title == extracted.sections[0].path == "Fridge notes"


@pytest.mark.parametrize(
    "data, fmt, reason",
    [(b"", "html", "empty file"), (b"  \n", "text", "empty file"), (b"ab\x00cd", "text", "binary"),
     (b"\xff\xfe\xfa bad", "text", "not valid utf-8"), (b"\xe9t\xe9", "markdown", "not valid utf-8"),
     (b"<html><body><nav>x</nav></body></html>", "html", "no text"),
     (b"%PDF-1.4 truncated", "pdf", "corrupt PDF"), (b"x", "docx", "unsupported format")],
)
def test_unreadable_documents_raise_with_reason(data, fmt, reason):
    with pytest.raises(ExtractionError, match=reason):
        extract_document(data, fmt, "x")


def test_default_corpus_has_no_sphinx_chrome():
    for entry in scan_corpus(DEFAULT_CORPUS_DIR):
        text = extract_document((DEFAULT_CORPUS_DIR / entry.path).read_bytes(), entry.format, entry.path).text
        leaked = [chrome for chrome in SPHINX_CHROME if chrome in text]
        assert not leaked, f"{entry.path} leaks {leaked}"


words = st.text(alphabet="abcdefghij ", min_size=1, max_size=30).map(str.strip).filter(bool)


@settings(max_examples=75, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["h1", "h2", "h3", "p", "pre", "li"]), words), min_size=1, max_size=25))
def test_section_offsets_slice_back_to_section_bodies(blocks):
    markup = "<html><body><main>" + "".join(
        f"<ul><li>{t}</li></ul>" if tag == "li" else f"<{tag}>{t}</{tag}>" for tag, t in blocks
    ) + "</main></body></html>"
    extracted = extract_html(markup.encode(), "doc")
    text = extracted.text
    previous_end = 0
    for section in extracted.sections:
        body = text[section.start:section.end]
        assert body == body.strip()
        assert section.start >= previous_end
        previous_end = section.end
        # a body never holds a heading: the next heading begins after it
        if section.heading:
            assert text[:section.start].rstrip().endswith(section.heading)
    # every paragraph that is not a heading lies in exactly one section body
    headings = {s.heading for s in extracted.sections if s.heading}
    covered = "".join(text[s.start:s.end] for s in extracted.sections)
    for paragraph in text.split("\n\n"):
        if paragraph not in headings:
            assert paragraph in covered
