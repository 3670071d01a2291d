"""Where a text lies in the canonical texts: exactly (folded), approximately (the share covered), or not at all."""

from rag_assets.lib.ingest.alignment import LOCATED_RATIO, Aligner

DOCS = {"a.md": "Intro.\n\nThe quick brown fox jumps over the lazy dog near the river bank.\n",
        "b.md": "Other text entirely, about caches and the disk they are written to.\n"}


def test_an_exact_text_is_placed_by_its_offsets_in_the_canonical_text_whatever_its_whitespace():
    aligner = Aligner(DOCS)
    found = aligner.align("quick  brown\nfox")
    assert (found.doc_id, found.ratio) == ("a.md", 1.0)
    assert DOCS["a.md"][found.start:found.end] == "quick brown fox"


def test_an_approximate_text_is_placed_with_the_share_it_covers():
    found = Aligner(DOCS).align("The quick brown fox leaps over the lazy dog near the river bank.")
    assert found.doc_id == "a.md" and LOCATED_RATIO <= found.ratio < 1.0
    assert DOCS["a.md"][found.start:found.end].startswith("The quick") and DOCS["a.md"][found.end - 5:found.end] == "bank."


def test_a_text_looked_for_in_one_document_is_not_found_in_another():
    assert Aligner(DOCS).align("about caches and the disk", "a.md").doc_id is None
    assert Aligner(DOCS).align("about caches and the disk", "missing.md").doc_id == "b.md"  # unknown: any document


def test_a_text_that_is_not_there_or_empty_is_not_placed():
    aligner = Aligner(DOCS)
    assert aligner.align("Completely unrelated words about cooking pasta.").doc_id is None
    assert aligner.align("  ").ratio == 0.0
