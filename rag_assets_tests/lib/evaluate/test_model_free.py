"""A retriever that does not use the embedding model (BM25) is recorded once per strategy, under its own name
in the model column, not once per model with identical rows; the stamp check knows it has no weights."""

import duckdb
import pyarrow as pa

from rag_assets.lib.evaluate.results_store import model_free_once
from rag_assets.lib.retrieve.engine import model_free
from rag_assets.lib.store.stamps import EXTERNAL_MODEL, stamp_problems


def _rows() -> pa.Table:
    rows = []
    for model, revision in (("m1", "r1"), ("m2", "r2"), (EXTERNAL_MODEL, "v1")):
        for strategy in ("blind", "boundaries"):
            for retriever in ("dense", "bm25", "hybrid"):
                for query in ("q1", "q2"):
                    rows.append({"model": model, "revision": revision, "dimension": 8, "normalized": True,
                                 "strategy": strategy, "retriever": retriever, "query_id": query,
                                 "hit_rank": 1 if retriever == "bm25" else 2, "latency_ms": 1.0})
    return pa.Table.from_pylist(rows)


def test_bm25_is_the_only_retriever_that_does_not_use_the_model():
    assert model_free() == ("bm25",)


def test_bm25_rows_are_kept_once_per_strategy_under_its_own_name():
    with duckdb.connect() as connection:
        once = model_free_once(connection, _rows(), model_free())
    assert once.schema == _rows().schema
    kept = {(r["model"], r["strategy"], r["retriever"]) for r in once.to_pylist()}
    assert ("bm25", "blind", "bm25") in kept and ("bm25", "boundaries", "bm25") in kept
    assert not [c for c in kept if c[2] == "bm25" and c[0] in ("m1", "m2")]
    assert (EXTERNAL_MODEL, "blind", "bm25") in kept  # a team's retriever of that name is its own
    bm25 = [r for r in once.to_pylist() if r["model"] == "bm25"]
    assert len(bm25) == 2 * 2 and {r["revision"] for r in bm25} == {None} and {r["dimension"] for r in bm25} == {None}
    # everything else is as it was: two models x two strategies x (dense, hybrid) x two queries, and the external
    assert len(once) == 2 * 2 * 2 * 2 + 4 + 2 * 3 * 2


def test_the_stamp_check_does_not_ask_the_registry_for_bm25s_weights():
    stamps = [{"model": "bm25", "revision": None, "dimension": None, "normalized": None, "strategy": "blind",
               "pipeline_version": "3", "extractor_version": "x", "snapshot_id": "s"},
              {"model": "m1", "revision": "r1", "dimension": 8, "normalized": True, "strategy": "blind",
               "pipeline_version": "3", "extractor_version": "x", "snapshot_id": "s"}]
    assert stamp_problems(stamps, {"m1": "r1"}, "3", model_free=("bm25",)) == []
    assert stamp_problems(stamps, {"m1": "r1"}, "3") == ["bm25: not in the model registry"]
