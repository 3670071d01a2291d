"""Needles re-located in a new snapshot: kept, moved, edited (with the sentence offered as successor), removed or
ambiguous, and the evaluation stopped only when too many are lost."""

import pytest

from rag_assets.lib.evalsets.queries import Needle
from rag_assets.lib.evalsets.relocation import (
    AMBIGUOUS,
    EDITED,
    KEPT,
    MOVED,
    REMOVED,
    SUCCESSOR_SIMILARITY,
    Relocator,
    counts,
    counts_of_changes,
    held_needles,
    relocate,
    similarity,
    too_many_lost,
    whole_sentences,
)

RINSE = "Let the mixture stand for one hour before rinsing it off with cold water."
OTHER = "The cache keeps every vector it computed on the local disk of the machine."
DOCS = {
    "care.md": f"Caring for the floor\n\nSweep it daily. {RINSE} Dry it with a soft cloth.\n",
    "cache.md": f"The cache\n\n{OTHER} It is safe to delete it.\n",
}
HEADINGS = {"care.md": ["Caring for the floor"], "cache.md": ["The cache"]}


def needle(text=RINSE, doc_id="care.md", needle_id="k1"):
    return Needle(needle_id, doc_id, text, {"doc": "How long must it stand?"})


def relocated(documents, text=RINSE, doc_id="care.md", headings=HEADINGS):
    return Relocator(documents, headings).relocate(needle(text, doc_id))


def test_a_needle_still_verbatim_in_its_document_is_kept():
    result = relocated(DOCS)
    assert (result.status, result.doc_id, result.successor, result.similarity, result.held) == (
        KEPT, "care.md", None, 1.0, True)


def test_a_typographic_change_is_the_same_folded_text_and_kept():
    curly = {**DOCS, "care.md": DOCS["care.md"].replace("one hour", "one\u00a0hour").replace("rinsing it", "rinsing  it")}
    assert relocated(curly).status == KEPT


def test_a_needle_moved_to_another_page_is_kept_with_its_new_place():
    moved = {"care.md": "Caring for the floor\n\nSweep it daily.\n", "cache.md": DOCS["cache.md"] + RINSE + "\n"}
    result = relocated(moved)
    assert (result.status, result.doc_id, result.previous_doc_id, result.held) == (MOVED, "cache.md", "care.md", True)
    [held] = held_needles([needle()], [result])
    assert (held.doc_id, held.needle) == ("cache.md", RINSE)


@pytest.mark.parametrize("edited", [
    "Let the mixture stand for an hour before you rinse it off with cold water.",  # the writers' everyday edit
    "Let the mixture stand for one hour before rinsing it off with warm water.",  # one word
    "Let the mixture stand for one hour, or longer on old stains, before rinsing it off with cold water.",  # a clause
])
def test_an_edited_needle_offers_the_whole_new_sentence_as_its_successor(edited):
    result = relocated({**DOCS, "care.md": DOCS["care.md"].replace(RINSE, edited)})
    assert (result.status, result.doc_id, result.successor, result.held) == (EDITED, "care.md", edited, False)
    assert SUCCESSOR_SIMILARITY <= result.similarity < 1.0 and "edited" in result.reason


def test_an_edited_needle_moved_to_another_page_is_found_there():
    edited = RINSE.replace("cold", "warm")
    result = relocated({"care.md": "Caring for the floor\n\nSweep it daily.\n", "cache.md": DOCS["cache.md"] + edited})
    assert (result.status, result.doc_id, result.successor) == (EDITED, "cache.md", edited)
    assert "moved to cache.md" in result.reason


def test_a_deleted_needle_is_removed_and_offers_nothing():
    result = relocated({**DOCS, "care.md": DOCS["care.md"].replace(RINSE + " ", "")})
    assert (result.status, result.successor, result.held) == (REMOVED, None, False)
    assert result.similarity < SUCCESSOR_SIMILARITY and result.reason.startswith("removed: no sentence of the snapshot is like it")


def test_a_rewrite_beyond_recognition_is_removed():
    rewritten = "Rinse after sixty minutes."
    result = relocated({**DOCS, "care.md": DOCS["care.md"].replace(RINSE, rewritten)})
    assert result.status == REMOVED


def test_a_sentence_that_holds_the_needle_among_much_more_is_no_successor():
    merged = ("Let the mixture stand for one hour before rinsing it off with warm water, and then repeat the whole "
              "treatment twice more on the old stains near the door.")
    result = relocated({**DOCS, "care.md": DOCS["care.md"].replace(RINSE, merged)})
    assert (result.status, result.successor) == (REMOVED, None)
    assert result.similarity < SUCCESSOR_SIMILARITY and result.reason.endswith(f"(the nearest {result.similarity:.2f})")


def test_a_needle_that_now_occurs_twice_is_ambiguous_naming_where():
    twice = {**DOCS, "cache.md": DOCS["cache.md"] + RINSE}
    result = relocated(twice)
    assert (result.status, result.held) == (AMBIGUOUS, False)
    assert "occurs 2 times" in result.reason and "cache.md (1)" in result.reason and "care.md (1)" in result.reason


def test_a_needle_that_became_a_heading_is_ambiguous():
    result = relocated(DOCS, "Sweep it daily.", headings={"care.md": ["Sweep it daily."]})
    assert (result.status, result.reason) == (AMBIGUOUS, "is (inside) a heading of care.md")


def test_an_edit_whose_nearest_sentence_occurs_twice_offers_no_successor():
    edited = RINSE.replace("cold", "warm")
    documents = {"care.md": DOCS["care.md"].replace(RINSE, edited), "cache.md": DOCS["cache.md"] + edited}
    result = relocated(documents)
    assert (result.status, result.successor) == (REMOVED, None) and "occurs 2 times" in result.reason


def test_similarity_is_folded_and_case_blind_and_counts_added_text():
    assert similarity("Let it  Stand.", "let it stand.") == 1.0
    assert similarity(RINSE, RINSE + " And then some more words were added here.") < similarity(RINSE, RINSE)
    assert similarity("", RINSE) == 0.0


def test_whole_sentences_widens_a_span_to_the_sentences_it_touches_on_its_line():
    text = "First one. Second one here. Third.\nNext line."
    start = text.index("cond")
    assert whole_sentences(text, start, start + 4) == "Second one here."
    assert whole_sentences(text, text.index("here"), text.index("Third") + 2) == "Second one here. Third."
    assert whole_sentences(text, text.index("Next"), len(text)) == "Next line."


def test_the_evaluation_stops_only_above_the_share_and_names_every_lost_needle():
    documents = {**DOCS, "care.md": DOCS["care.md"].replace(RINSE, "")}
    needles = [needle(RINSE, needle_id="k1"), needle(OTHER, "cache.md", "k2"), needle(OTHER, "cache.md", "k3"),
               needle(OTHER, "cache.md", "k4"), needle(OTHER, "cache.md", "k5")]
    relocations = relocate(needles, documents, HEADINGS)
    assert counts(relocations) == {KEPT: 4, MOVED: 0, EDITED: 0, REMOVED: 1, AMBIGUOUS: 0}
    assert too_many_lost(relocations, 0.2) is None  # 1 of 5 is 20 %: not more than the share
    stop = too_many_lost(relocations, 0.19)
    assert stop.startswith("1 of 5 needles (20%) no longer hold") and "k1: removed: no sentence" in stop and "k2" not in stop
    assert "needles repair" in stop
    assert [n.id for n in held_needles(needles, relocations)] == ["k2", "k3", "k4", "k5"]
    assert too_many_lost([], 0.0) is None


def test_the_counts_are_read_back_from_what_the_set_file_carries():
    documents = {**DOCS, "care.md": DOCS["care.md"].replace(RINSE, "")}
    needles = [needle(RINSE, needle_id="k1"), needle(OTHER, "care.md", "k2"), needle(OTHER, "cache.md", "k3")]
    relocations = relocate(needles, documents, HEADINGS)  # k1 removed, k2 moved, k3 kept
    changes = [r.row() for r in relocations if r.status != KEPT]
    assert counts_of_changes(changes, asked=2) == counts(relocations) == {
        KEPT: 1, MOVED: 1, EDITED: 0, REMOVED: 1, AMBIGUOUS: 0}
