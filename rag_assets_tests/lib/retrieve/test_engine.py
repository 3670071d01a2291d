import pytest

from rag_assets.lib.evalsets.queries import Query
from rag_assets.lib.retrieve.cross_encoder import CrossEncoderUnavailable, load
from rag_assets.lib.retrieve.engine import RETRIEVERS, Index, available, run_retrievers
from rag_assets_tests.fakes import HashingEmbedder

TEXTS = ["kettle descaling with vinegar", "toaster crumbs tray", "fridge temperature three degrees",
         "kettle base never in water"]


@pytest.fixture
def index():
    embedder = HashingEmbedder(dimension=64)
    return Index(chunk_ids=[f"c{i}" for i in range(len(TEXTS))], texts=TEXTS, vectors=embedder.embed(TEXTS),
                 embedder=embedder)


def test_every_available_retriever_answers_every_query_in_order(index):
    queries = [Query("q1", "n1", "doc", "vinegar kettle"), Query("q2", "n2", "doc", "zebra")]
    rows = run_retrievers(queries, index, k=3)
    assert [(r["query_id"], r["retriever"]) for r in rows] == [
        (q, name) for q in ("q1", "q2") for name in ("dense", "ann", "bm25", "hybrid", "late_interaction")]
    by = {(r["query_id"], r["retriever"]): r for r in rows}
    # the words of q1 are those of c0: every retriever puts it first
    assert all(by[("q1", name)]["chunk_ids"][0] == "c0" for name in ("dense", "ann", "bm25", "hybrid",
                                                                      "late_interaction"))
    assert sorted(by[("q2", "ann")]["chunk_ids"]) == sorted(by[("q2", "dense")]["chunk_ids"])  # a tiny graph
    # "zebra" is in no chunk: BM25 returns nothing; dense still ranks everything
    assert by[("q2", "bm25")]["chunk_ids"] == [] and len(by[("q2", "dense")]["chunk_ids"]) == 3
    # distances for dense (1 - cos) and late interaction (1 - mean MaxSim), none for BM25 and fusion;
    # a second stage's latency includes the first
    for name in ("dense", "late_interaction"):
        assert by[("q1", name)]["distances"] == pytest.approx([1 - s for s in by[("q1", name)]["scores"]])
    assert by[("q1", "bm25")]["distances"] is None and by[("q1", "hybrid")]["distances"] is None
    hybrid = by[("q1", "hybrid")]
    assert hybrid["latency_ms"] == pytest.approx(
        hybrid["stage_ms"] + by[("q1", "dense")]["latency_ms"] + by[("q1", "bm25")]["latency_ms"])
    assert by[("q1", "late_interaction")]["latency_ms"] > hybrid["latency_ms"]


def test_no_cross_encoder_configured_means_no_cross_encoder_rows(index):
    assert "cross_encoder" in RETRIEVERS and "cross_encoder" not in available(index)
    rows = run_retrievers([Query("q", "n", "doc", "kettle")], index, k=2, names=["dense", "cross_encoder"])
    assert [r["retriever"] for r in rows] == ["dense"]


def test_a_second_stage_alone_still_runs_its_inputs(index):
    rows = run_retrievers([Query("q", "n", "doc", "toaster tray")], index, k=2, names=["late_interaction"])
    assert [r["retriever"] for r in rows] == ["late_interaction"] and rows[0]["chunk_ids"][0] == "c1"


def test_a_cross_encoder_folder_must_hold_a_model(tmp_path):
    with pytest.raises(CrossEncoderUnavailable, match=f"{tmp_path}.*trained sentence-transformers CrossEncoder"):
        load(str(tmp_path))


def test_the_registry_entries_carry_the_facts_every_other_list_of_retrievers_is_derived_from():
    from rag_assets.lib.answer.ask import GATED
    from rag_assets.lib.evaluate.comparisons import RERANKERS
    from rag_assets.lib.retrieve.engine import gated, rerankers, uses_model

    assert [name for name in RETRIEVERS if not uses_model(name)] == ["bm25"]  # hybrid uses dense's vectors
    assert gated() == GATED == ("dense", "ann", "late_interaction")
    assert rerankers() == RERANKERS == ("late_interaction", "cross_encoder")


def test_a_retriever_added_to_the_registry_is_run_by_default_gated_and_compared(index, monkeypatch):
    from rag_assets.cli import gated_retriever
    from rag_assets.lib.retrieve import dense
    from rag_assets.lib.retrieve.engine import FirstStage, gated, uses_model

    monkeypatch.setitem(RETRIEVERS, "dense_again", FirstStage("dense_again", dense.search, embeds=True, gated=True))
    rows = run_retrievers([Query("q1", "n1", "doc", "vinegar kettle")], index, k=2)
    assert "dense_again" in {row["retriever"] for row in rows}  # an empty list of names runs every one
    assert "dense_again" in gated() and uses_model("dense_again") and gated_retriever("dense_again")
    with pytest.raises(Exception, match="'bm25' has no distance to gate on, nor has any retriever it builds on; "
                                        "use one of dense, ann"):
        gated_retriever("bm25")


def test_an_unknown_retriever_setting_is_refused_naming_the_registered_ones():
    import pyarrow as pa

    from rag_assets.lib.retrieve.runs import retrieve_and_judge

    empty = pa.table({"x": [1]})
    with pytest.raises(ValueError, match="unknown retriever.* dnese .*the retrievers are dense, ann, bm25"):
        retrieve_and_judge(empty, empty, empty, empty, HashingEmbedder(dimension=8), ["dense", "dnese"], 3)


def test_only_the_hnsw_search_is_approximate_and_the_others_are_exact():
    from rag_assets.lib.evaluate.equivalence import approximate

    assert [name for name, r in RETRIEVERS.items() if getattr(r, "approximate", False)] == ["ann"]
    assert approximate("ann") and not approximate("dense") and not approximate("hybrid")
    assert not approximate("a-teams-own")  # unknown: exact
