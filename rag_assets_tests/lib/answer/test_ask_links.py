from rag_assets.lib.answer.ask import Document, source_link


def _document(fmt: str, anchors: list[str | None]) -> Document:
    sections = [{"start": 100 * i, "end": 100 * i + 90, "anchor": anchor} for i, anchor in enumerate(anchors)]
    return Document(doc_id=f"doc.{fmt}", format=fmt, title="T", text="x" * 400, sections=sections)


def test_a_source_links_to_its_html_anchor_its_pdf_page_or_its_characters():
    assert source_link(_document("html", ["intro", "methods"]), 150, 180) == "doc.html#methods"
    assert source_link(_document("pdf", ["page=1", "page=2", "page=3"]), 210, 260) == "doc.pdf#page=3"
    # plain text has no anchors; text before the first section has none either
    assert source_link(_document("text", [None]), 10, 40) == "doc.text#char=10,40"
    assert source_link(_document("html", [None, "later"]), 5, 20) == "doc.html#char=5,20"
