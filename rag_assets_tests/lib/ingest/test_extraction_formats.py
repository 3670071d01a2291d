"""Every supported format on the mixed fixture folder, and every way a document can be broken."""

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.lib.ingest.documents import extract_file, extraction_summary
from rag_assets.lib.ingest.extraction import (
    EXTRACTOR_NAME,
    EXTRACTOR_VERSION,
    extract_document,
    extract_markdown,
)

MIXED_GOOD = ["docs/guide.rst", "docs/notes.md", "page.html", "plain.txt", "report.pdf"]
MIXED_BROKEN = {"binary.txt": "binary content", "broken.pdf": "corrupt PDF", "docs/latin1.md": "not valid utf-8"}
FORMATS = {".html": "html", ".md": "markdown", ".rst": "rst", ".txt": "text", ".pdf": "pdf"}


@pytest.fixture
def mixed(tiny_corpus):
    return tiny_corpus.parent / "mixed_corpus"


def _extract(folder, path, max_bytes=10_000_000):
    data = (folder / path).read_bytes()
    suffix = "." + path.rsplit(".", 1)[1]
    return extract_file(folder, path, FORMATS[suffix], hashlib.sha256(data).hexdigest(), max_bytes)


def _sections(row):
    return [(s["path"], s["anchor"], row["text"][s["start"]:s["end"]]) for s in row["sections"]]


@pytest.mark.parametrize("path, title, sections", [
    # Markdown: GitHub anchors, a table as " | " rows, a fenced code block with its lines
    ("docs/notes.md", "Sourdough Notes", [
        ("Sourdough Notes", "sourdough-notes", "A starter needs feeding twice a day at room temperature."),
        ("Sourdough Notes > Baking", "baking",
         "Step | Minutes\nPreheat | 45\nBake covered | 20\n\nflour = 500\nwater = 350\n\n"
         "Let the loaf cool for an hour before slicing it."),
    ]),
    # reStructuredText: docutils' section ids, a code block keeping its indentation
    ("docs/guide.rst", "Tent Guide", [
        ("Tent Guide", "tent-guide", "Pitch the tent on level ground, away from dead branches."),
        ("Tent Guide > Guy lines", "guy-lines",
         "Tighten the guy lines until the fly sheet no longer touches the inner tent.\n\n"
         "stake A -> corner 1\n  stake B -> corner 2"),
    ]),
])
def test_markup_sections_anchors_tables_and_code(mixed, path, title, sections):
    row = _extract(mixed, path)
    assert row["status"] == "ok" and row["title"] == title
    assert _sections(row) == sections


def test_pdf_keeps_page_numbers_for_citations(mixed):
    row = _extract(mixed, "report.pdf")
    assert row["title"] == "Coffee Brewing"  # from the PDF's metadata
    sections = _sections(row)
    assert [(path, anchor) for path, anchor, _ in sections] == [
        ("Coffee Brewing > page 1", "page=1"), ("Coffee Brewing > page 2", "page=2")]
    assert "two hundred and fifty millilitres of water." in sections[0][2]
    assert sections[1][2] == "Grinding\n\nGrind the beans just before brewing so that the aroma is not lost."


def test_plain_text_title_is_its_short_first_line(mixed):
    row = _extract(mixed, "plain.txt")
    assert row["title"] == "Houseplant care"
    assert row["text"] == "Houseplant care\n\nWater succulents only when the soil is completely dry."


def test_html_in_a_declared_legacy_encoding():
    data = '<html><head><meta charset="iso-8859-1"></head><body><p>Café crème</p></body></html>'.encode("latin-1")
    assert extract_document(data, "html", "x").text == "Café crème"


def test_mixed_folder_extracts_every_good_file_and_fails_each_broken_one(mixed):
    rows = [_extract(mixed, path) for path in MIXED_GOOD + list(MIXED_BROKEN)]
    by_id = {row["doc_id"]: row for row in rows}
    assert all(by_id[path]["status"] == "ok" and by_id[path]["error"] is None for path in MIXED_GOOD)
    for path, reason in MIXED_BROKEN.items():
        assert by_id[path]["status"] == "failed"
        assert reason in by_id[path]["error"]
        assert by_id[path]["text"] is None
    assert {row["extractor"] for row in rows} == {EXTRACTOR_NAME}
    assert {row["extractor_version"] for row in rows} == {EXTRACTOR_VERSION}
    summary = extraction_summary(rows)
    assert (summary["documents"], summary["ok"], summary["failed"]) == (8, 5, 3)
    assert summary["failures"].keys() == MIXED_BROKEN.keys()
    assert summary["formats"]["markdown"] == {"ok": 1, "failed": 1}
    assert summary["characters"] == sum(len(by_id[p]["text"]) for p in MIXED_GOOD)


def test_oversized_empty_and_changed_files_fail_with_reasons(tmp_path):
    (tmp_path / "big.txt").write_text("word " * 100)
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "moved.txt").write_text("new text")
    big = extract_file(tmp_path, "big.txt", "text", hashlib.sha256(b"").hexdigest(), max_bytes=100)
    assert big["status"] == "failed" and "500 bytes is over the 100-byte limit" in big["error"]
    empty = extract_file(tmp_path, "empty.txt", "text", hashlib.sha256(b"").hexdigest(), max_bytes=100)
    assert empty["status"] == "failed" and empty["error"] == "empty file"
    moved = extract_file(tmp_path, "moved.txt", "text", hashlib.sha256(b"old text").hexdigest(), max_bytes=100)
    assert moved["status"] == "failed" and "changed since the corpus snapshot" in moved["error"]
    gone = extract_file(tmp_path, "gone.txt", "text", "0" * 64, max_bytes=100)
    assert gone["status"] == "failed" and "No such file" in gone["error"]


word = st.text(alphabet="abcdefgh", min_size=1, max_size=8)
line = st.lists(word, min_size=1, max_size=8).map(" ".join)


@settings(max_examples=75, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["#", "##", "###", "p", "code", "item"]), line), min_size=1, max_size=20))
def test_markdown_section_offsets_slice_back(blocks):
    source = "\n\n".join(
        f"{kind} {text}" if kind.startswith("#") else f"```\n{text}\n  {text}\n```" if kind == "code"
        else f"- {text}" if kind == "item" else text
        for kind, text in blocks
    )
    extracted = extract_markdown(source.encode(), "doc")
    previous_end = 0
    for section in extracted.sections:
        body = extracted.text[section.start:section.end]
        assert body == body.strip("\n ")
        assert section.start >= previous_end
        previous_end = section.end
        if section.heading:
            assert extracted.text[:section.start].rstrip().endswith(section.heading)
    # the bodies and headings together hold every paragraph of the canonical text
    pieces = {s.heading for s in extracted.sections if s.heading}
    bodies = "\n\n".join(extracted.text[s.start:s.end] for s in extracted.sections)
    for paragraph in extracted.text.split("\n\n"):
        assert paragraph in pieces or paragraph in bodies


def test_code_whose_lines_end_with_br_keeps_its_lines():
    """Docusaurus' highlighter ends each code line with <br> inside a span: the lines, blank ones too, stay."""
    html = (b"<html><body><main><p>Example.</p><pre><code><span>a = 1<br></span><span><br></span>"
            b"<span>b = 2<br></span></code></pre></main></body></html>")
    from rag_assets.lib.ingest.extraction import extract_html

    assert extract_html(html, "x").text == "Example.\n\na = 1\n\nb = 2"
