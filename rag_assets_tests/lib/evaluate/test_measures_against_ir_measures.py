"""The measures computed in SQL (rag_assets/lib/evaluate/measures.py) against ir_measures (pytrec_eval) on
random runs and qrels, including misses, empty lists and queries whose relevant items were never retrieved."""

import duckdb
import ir_measures
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_measures import RR, P, Qrel, R, ScoredDoc, Success, nDCG

from rag_assets.lib.evaluate.catalog import K_VALUES
from rag_assets.lib.evaluate.measures import comparison, write_results

SCHEMA = pa.schema([("query_id", pa.string()), ("query_kind", pa.string()), ("hit_rank", pa.int64()),
                    ("relevant_ranks", pa.list_(pa.int64())), ("relevant_total", pa.int64()), ("phrasing", pa.string()),
                    ("retriever", pa.string()), ("model", pa.string()), ("revision", pa.string()),
                    ("strategy", pa.string()), ("latency_ms", pa.float64())])
POOL = [f"d{i}" for i in range(40)]


@st.composite
def judged_query(draw):
    """(ranked list, relevant items) of one query: up to 25 items ranked, 0 to 4 relevant ones, some of
    which the list may not reach."""
    ranked = draw(st.lists(st.sampled_from(POOL), unique=True, max_size=25))
    relevant = draw(st.lists(st.sampled_from(POOL), unique=True, max_size=4))
    return ranked, relevant


def _ours(queries: list[tuple[list[str], list[str]]], kind: str) -> dict:
    rows = []
    for number, (ranked, relevant) in enumerate(queries):
        ranks = [rank for rank, item in enumerate(ranked, start=1) if item in relevant]
        rows.append({"query_id": f"q{number}", "query_kind": kind, "hit_rank": ranks[0] if ranks else None,
                     "relevant_ranks": ranks, "relevant_total": len(relevant), "phrasing": "doc", "retriever": "dense",
                     "model": "m", "revision": "r", "strategy": "s", "latency_ms": 1.0})
    with duckdb.connect() as connection:
        write_results(connection, pa.Table.from_pylist(rows, schema=SCHEMA))
        [row] = comparison(connection, ["model"]).to_pylist()
    return row


def _theirs(queries: list[tuple[list[str], list[str]]], measures) -> dict:
    qrels, run = [], []
    for number, (ranked, relevant) in enumerate(queries):
        query = f"q{number}"
        # a query with nothing relevant (a needle no chunk holds) still counts: one item that is never retrieved
        qrels += [Qrel(query, item, 1) for item in relevant] or [Qrel(query, "never-retrieved", 1)]
        # an empty list is a miss, not a dropped query: trec_eval skips queries without a run line
        run += [ScoredDoc(query, item, float(len(ranked) - i)) for i, item in enumerate(ranked)] or [
            ScoredDoc(query, "nothing-relevant", 0.0)]
    return ir_measures.calc_aggregate(measures, qrels, run)


@settings(max_examples=60, deadline=None)
@given(queries=st.lists(judged_query(), min_size=1, max_size=12), kind=st.sampled_from(["needle", "document"]))
def test_sql_measures_equal_ir_measures(queries, kind):
    ours = _ours(queries, kind)
    measures = [*(Success @ k for k in K_VALUES), *(P @ k for k in K_VALUES), RR, nDCG @ 10]
    measures += [R @ k for k in K_VALUES] if kind == "document" else []
    theirs = _theirs(queries, measures)
    for k in K_VALUES:
        assert ours[f"success_at_{k}"] == pytest.approx(theirs[Success @ k], abs=1e-9)
        assert ours[f"precision_at_{k}"] == pytest.approx(theirs[P @ k], abs=1e-9)
        if kind == "document":  # a needle query's recall is whether its needle was found: success@k
            assert ours[f"recall_at_{k}"] == pytest.approx(theirs[R @ k], abs=1e-9)
        else:
            assert ours[f"recall_at_{k}"] == ours[f"success_at_{k}"]
    assert ours["mrr"] == pytest.approx(theirs[RR], abs=1e-9)
    assert ours["ndcg_at_10"] == pytest.approx(theirs[nDCG @ 10], abs=1e-9)
    assert ours["queries"] == len(queries)  # no query dropped
