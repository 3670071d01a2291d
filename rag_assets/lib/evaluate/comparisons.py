"""The default paired comparisons, computed from ``query_measures`` and stored as ``comparisons``.

Strategies (dense retriever, success@8 and success@20): E vs A (header vs blind), E vs C (header vs
boundaries alone), B vs A (overlap vs blind), F vs E (overlap on top of the header).
Retrievers (each strategy): hybrid vs dense and hybrid vs BM25 at success@4; every second stage vs
hybrid at success@1 and MRR. Each pair is compared over the queries both answered (same query ids),
per model.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from rag_assets.lib.evaluate.catalog import measure as declared
from rag_assets.lib.evaluate.paired_tests import paired_test
from rag_assets.lib.retrieve.engine import rerankers
from rag_assets.lib.store.stamps import EXTERNAL_MODEL  # an external retriever's rows

# what the report shows by default (with the default model): the strategy whose retrievers are
# compared, and the retriever strategies are compared on
REPORT_STRATEGY = "boundaries_header"
STRATEGY_RETRIEVER = "dense"

STRATEGY_PAIRS = [
    ("E vs A", "boundaries_header", "blind"),
    ("E vs C", "boundaries_header", "boundaries"),
    ("B vs A", "blind_overlap", "blind"),
    ("F vs E", "boundaries_header_overlap", "boundaries_header"),
]
STRATEGY_MEASURES = ("success_at_8", "success_at_20")
RETRIEVER_PAIRS = [("hybrid", "dense", ("success_at_4",)), ("hybrid", "bm25", ("success_at_4",))]
RERANKERS = rerankers()  # the second stages, each compared with the list it re-scores
RERANK_MEASURES = ("success_at_1", "mrr")


EXTERNAL_MEASURES = ("success_at_4", "mrr")


def _values(connection, model, strategy, retriever, measure) -> dict[str, float]:
    return dict(connection.execute(
        f"SELECT query_id, {declared(measure).column} FROM query_measures WHERE model = ? AND strategy = ? AND retriever = ?",
        [model, strategy, retriever]).fetchall())


def _compare(connection, model, label, a, b, measure, b_model: str | None = None) -> dict | None:
    """a and b are (strategy, retriever); b of ``b_model`` when it is another model's."""
    left, right = _values(connection, model, *a, measure), _values(connection, b_model or model, *b, measure)
    shared = sorted(set(left) & set(right))
    if not shared:
        return None
    x, y = [left[q] for q in shared], [right[q] for q in shared]
    result = paired_test(declared(measure), x, y)
    return {"model": model, "comparison": label, "a_strategy": a[0], "a_retriever": a[1], "b_strategy": b[0],
            "b_retriever": b[1], "measure": measure, "queries": len(shared), "a_value": sum(x) / len(x),
            "b_value": sum(y) / len(y), "wins": result.wins, "losses": result.losses, "ties": result.ties,
            "p_value": result.p_value, "test": result.test, "result": result.label()}


def compute_comparisons(connection: duckdb.DuckDBPyConnection) -> pa.Table:
    configurations = connection.sql("SELECT DISTINCT model, strategy, retriever FROM query_measures").fetchall()
    present = set(configurations)
    rows = []
    for model in sorted({c[0] for c in configurations}):
        for label, a, b in STRATEGY_PAIRS:
            if (model, a, STRATEGY_RETRIEVER) in present and (model, b, STRATEGY_RETRIEVER) in present:
                rows += [_compare(connection, model, label, (a, STRATEGY_RETRIEVER), (b, STRATEGY_RETRIEVER), m)
                         for m in STRATEGY_MEASURES]
        for strategy in sorted({c[1] for c in configurations if c[0] == model}):
            for a, b, measures in RETRIEVER_PAIRS:
                if (model, strategy, a) in present and (model, strategy, b) in present:
                    rows += [_compare(connection, model, f"{a} vs {b}", (strategy, a), (strategy, b), m)
                             for m in measures]
            for reranker in RERANKERS:
                if (model, strategy, reranker) in present and (model, strategy, "hybrid") in present:
                    rows += [_compare(connection, model, f"{reranker} vs hybrid", (strategy, reranker),
                                      (strategy, "hybrid"), m) for m in RERANK_MEASURES]
    rows += external_against_best(connection, configurations)
    rows = [row for row in rows if row is not None]
    schema = pa.schema([("model", pa.string()), ("comparison", pa.string()), ("a_strategy", pa.string()),
                        ("a_retriever", pa.string()), ("b_strategy", pa.string()), ("b_retriever", pa.string()),
                        ("measure", pa.string()), ("queries", pa.int64()), ("a_value", pa.float64()),
                        ("b_value", pa.float64()), ("wins", pa.int64()), ("losses", pa.int64()), ("ties", pa.int64()),
                        ("p_value", pa.float64()), ("test", pa.string()), ("result", pa.string())])
    return pa.Table.from_pylist(rows, schema=schema)


def best_built_in(connection: duckdb.DuckDBPyConnection) -> tuple[str, str, str] | None:
    """The built-in configuration with the highest MRR over the judged queries (ties: success@4, then name)."""
    best = connection.execute(
        "SELECT model, strategy, retriever FROM query_measures WHERE model <> ? "
        "GROUP BY ALL ORDER BY avg(reciprocal_rank) DESC, avg(hit_at_4) DESC, model, strategy, retriever LIMIT 1", [EXTERNAL_MODEL]).fetchall()
    return tuple(best[0]) if best else None


def external_against_best(connection: duckdb.DuckDBPyConnection, configurations) -> list[dict | None]:
    """Each external retriever against the best built-in configuration, on the same queries: the sign test
    on success@4 and Wilcoxon on reciprocal rank (``+wins/-losses, p``)."""
    best = best_built_in(connection)
    if best is None:
        return []
    model, strategy, retriever = best
    return [_compare(connection, EXTERNAL_MODEL, f"{key} vs best built-in ({model} x {strategy} x {retriever})",
                     (key, key), (strategy, retriever), measure, b_model=model)
            for key in sorted({c[1] for c in configurations if c[0] == EXTERNAL_MODEL}) for measure in EXTERNAL_MEASURES]


def write_comparisons(connection: duckdb.DuckDBPyConnection) -> pa.Table:
    table = compute_comparisons(connection)
    connection.register("incoming_comparisons", table)
    connection.execute("CREATE OR REPLACE TABLE comparisons AS SELECT * FROM incoming_comparisons")
    connection.unregister("incoming_comparisons")
    return table


def comparisons_heading(strategy: str = REPORT_STRATEGY) -> str:
    return f"Paired tests (strategies on {STRATEGY_RETRIEVER}; retrievers on {strategy})"
