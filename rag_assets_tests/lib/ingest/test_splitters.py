"""A team's splitter as a strategy: every kind on real text, every kept chunk exactly ``canonical[start:end]``,
what cannot be located counted and never judged, and a failing splitter one line naming the strategy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rag_assets.lib.ingest.chunking import Strategy
from rag_assets.lib.ingest.extraction import extract_document
from rag_assets.lib.ingest.splitters import (
    SplitterError,
    library_version,
    locate_chunks,
    split_documents,
    strategy_chunk_rows,
)
from rag_assets.lib.ingest.tokens import token_count

CORPUS = Path(__file__).parents[2] / "fixtures" / "small_corpus"


def canonical_documents() -> list[dict]:
    rows = []
    for path in sorted(CORPUS.rglob("*.html"))[:4]:
        extracted = extract_document(path.read_bytes(), "html", path.stem)
        rows.append({"doc_id": path.name, "title": extracted.title, "text": extracted.text, "status": "ok",
                     "sections": [s._asdict() if hasattr(s, "_asdict") else vars(s) for s in extracted.sections], "snapshot_id": "s",
                     "extractor_version": "e"})
    assert rows and all(len(row["text"]) > 500 for row in rows)
    return rows


KINDS = [
    ("langchain", "RecursiveCharacterTextSplitter", "tokens", 128, 16, ()),
    ("langchain", "TokenTextSplitter", "tokens", 128, 16, ()),
    ("langchain", "MarkdownHeaderTextSplitter", "characters", 0, 0, (("headers_to_split_on", '[["#", "h1"]]'),)),
    ("llamaindex", "SentenceSplitter", "tokens", 128, 16, ()),
    ("llamaindex", "MarkdownNodeParser", "characters", 0, 0, ()),
    ("chonkie", "RecursiveChunker", "tokens", 128, 0, ()),
    ("semchunk", "", "tokens", 128, 16, ()),
    ("text_splitter", "TextSplitter", "characters", 400, 40, ()),
    ("python", "rag_assets_tests.lib.ingest.team_splitter:by_paragraph", "characters", 0, 0, ()),
]


@pytest.mark.parametrize("kind, splitter, unit, size, overlap, options", KINDS, ids=[f"{k}-{s.split(':')[-1]}"
                                                                                  for k, s, *_ in KINDS])
def test_every_kept_chunk_is_the_canonical_text_it_says(kind, splitter, unit, size, overlap, options):
    documents = canonical_documents()
    strategy = Strategy("team", target=size, overlap=overlap, unit=unit, kind=kind, splitter=splitter, options=options)
    rows, split = strategy_chunk_rows(documents, strategy)
    texts = {document["doc_id"]: document["text"] for document in documents}
    assert rows and split.unlocated == 0, split.named
    for row in rows:
        assert row["content"] == texts[row["doc_id"]][row["start"]:row["end"]] and row["content"].strip()
        assert row["text"] == row["content"] and row["span_start"] == row["start"]
    if size and unit == "tokens" and kind != "langchain":
        assert max(token_count(row["content"]) for row in rows) <= size + 2  # the library's own sizing, in tokens
    assert len({row["chunk_id"] for row in rows}) == len(rows)
    if kind != "python":
        assert library_version(strategy).split()[0] in {"langchain-text-splitters", "llama-index-core", "chonkie",
                                                       "semchunk", "semantic-text-splitter"}


def test_a_chunk_the_splitter_rewrote_is_counted_and_never_kept(monkeypatch):
    module = type(sys)("rewriting_splitter")
    module.split = lambda text: [text[:40], "words this corpus does not hold at all", text[40:80].upper()]
    monkeypatch.setitem(sys.modules, "rewriting_splitter", module)
    documents = canonical_documents()[:1]
    strategy = Strategy("rewrites", target=0, kind="python", splitter="rewriting_splitter:split")
    rows, split = strategy_chunk_rows(documents, strategy)
    assert len(rows) == 1 and rows[0]["start"] == 0 and split.unlocated == 2
    assert split.named[0].startswith(f"{documents[0]['doc_id']}: 'words this corpus")


def test_locating_is_exact_else_folded_and_a_repeated_passage_goes_where_the_splitter_got_to():
    text = "Alpha beta. Gamma delta.\n\nAlpha beta. Gamma delta.\n\nThe “quoted”   end."
    spans, lost = locate_chunks(text, ["Alpha beta. Gamma delta.", "Alpha beta. Gamma delta.", 'The "quoted" end.',
                                       "nowhere"])
    assert spans == [(0, 24), (26, 50), (52, len(text))] and lost == ["nowhere"]
    assert text[spans[2][0]:spans[2][1]] == "The “quoted”   end."


@pytest.mark.parametrize("function, said", [
    ("lambda text: 1 / 0", "the splitter failed on a.html: ZeroDivisionError"),
    ("lambda text: 'a string'", "the splitter returned a str for a.html, not a list of chunks"),
    ("lambda text: [3]", "chunk 0 of a.html is a int, not a string"),
    ("lambda text: __import__('time').sleep(5) or []", "the splitter ran longer than 0.2 s on a.html"),
])
def test_a_splitter_that_fails_is_one_line_naming_the_strategy(monkeypatch, function, said):
    module = type(sys)("bad_splitter")
    module.split = eval(function)  # noqa: S307 - the test's own function
    monkeypatch.setitem(sys.modules, "bad_splitter", module)
    strategy = Strategy("bad", target=0, kind="python", splitter="bad_splitter:split")
    with pytest.raises(SplitterError) as caught:
        split_documents(strategy, [("a.html", "Some text.")], seconds_per_document=0.2)
    assert str(caught.value).startswith("strategy 'bad': ") and said in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("strategy, said", [
    (Strategy("x", kind="langchain", splitter="NoSuchSplitter"), "langchain_text_splitters has no splitter class"),
    (Strategy("x", kind="python", splitter="no_such_module:split", target=0), "cannot import 'no_such_module:split'"),
    (Strategy("x", kind="langchain", splitter="RecursiveCharacterTextSplitter", options=(("colour", '"red"'),)),
     "cannot be made with these arguments"),
    (Strategy("x", kind="chonkie", splitter="RecursiveChunker", target=100, overlap=10), "takes no overlap"),
])
def test_a_splitter_that_cannot_be_made_is_one_line(strategy, said):
    with pytest.raises(SplitterError, match=said):
        split_documents(strategy, [("a.html", "Some text. " * 50)])


def test_a_library_that_is_not_installed_names_the_extra(monkeypatch):
    from rag_assets.lib.ingest import splitters

    monkeypatch.setitem(splitters.LIBRARIES, "langchain", ("no_such_library", "no-such-library"))
    with pytest.raises(SplitterError, match=r"needs no-such-library, which is not installed: pip install "
                                            r"'rag_assets\[splitters\]'"):
        library_version(Strategy("lc", kind="langchain", splitter="X"))


@pytest.mark.integration
@pytest.mark.parametrize("kind, splitter, unit, size", [
    ("llamaindex", "SemanticSplitterNodeParser", "characters", 0),
    ("chonkie", "SemanticChunker", "tokens", 256),
])
def test_a_semantic_splitter_cuts_with_the_evaluations_own_model(kind, splitter, unit, size):
    """LlamaIndex's and Chonkie's semantic splitters on real text with all-MiniLM-L6-v2 from its package: every
    kept chunk is the canonical text it says, the cuts are the model's (more than one chunk a document), and the
    model's weight revision is part of the strategy's version."""
    from rag_assets.lib.embed.models import BUILT_IN, RegistryModels, current_revision

    documents = canonical_documents()[:2]
    strategy = Strategy("semantic", target=size, unit=unit, kind=kind, splitter=splitter, model="all-MiniLM-L6-v2")
    models = RegistryModels(BUILT_IN)
    rows, split = strategy_chunk_rows(documents, strategy, models=models)
    texts = {document["doc_id"]: document["text"] for document in documents}
    assert rows and split.unlocated == 0, split.named
    assert all(row["content"] == texts[row["doc_id"]][row["start"]:row["end"]] for row in rows)
    assert all(sum(row["doc_id"] == doc_id for row in rows) > 1 for doc_id in texts)
    if size:
        assert max(token_count(row["content"]) for row in rows) <= size + 2
    revision = current_revision(BUILT_IN["all-MiniLM-L6-v2"])
    assert library_version(strategy, models).endswith(f"; model all-MiniLM-L6-v2 {revision}")


def test_a_semantic_splitter_names_its_model_and_an_unknown_one_is_one_line():
    """The model is part of the definition (another model is another partition version); an unregistered model
    is one line naming the strategy and the registered models."""
    from rag_assets.lib.embed.models import BUILT_IN, RegistryModels
    from rag_assets.lib.ingest.chunking import strategy_version

    one = Strategy("s", target=0, kind="llamaindex", splitter="SemanticSplitterNodeParser", model="all-MiniLM-L6-v2")
    other = Strategy("s", target=0, kind="llamaindex", splitter="SemanticSplitterNodeParser", model="bge-small")
    assert strategy_version(one) != strategy_version(other)
    assert Strategy("b").definition() == repr((512, 0, False, False, False, "characters", "ours", "", ()))
    unknown = Strategy("s", target=0, kind="llamaindex", splitter="SemanticSplitterNodeParser", model="no-such")
    with pytest.raises(SplitterError, match=r"^strategy 's': model 'no-such' is not registered \(registered: "):
        library_version(unknown, RegistryModels(BUILT_IN))
    with pytest.raises(SplitterError, match="needs the model registry"):
        library_version(one)
    with pytest.raises(SplitterError, match="takes no size"):
        split_documents(Strategy("s", target=100, kind="llamaindex", splitter="SemanticSplitterNodeParser",
                                 model="all-MiniLM-L6-v2"), [("a.html", "Some text. " * 20)],
                        models=RegistryModels(BUILT_IN))
