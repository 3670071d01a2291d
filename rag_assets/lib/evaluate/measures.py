"""Retrieval metrics computed in DuckDB with GROUP BY, from one row per query and configuration; each
measure's SQL, interval and paired test is declared once, in ``catalog.py``, and the views are built from it.

Conventions (ir_measures and TREC names in brackets):

- A needle query has one needle; the chunks that hold it whole in their own document text are its
  relevant items. ``hit_rank`` is the 1-based rank of the first of them in the list, or NULL when
  none is in it; ``relevant_ranks`` are the ranks of all of them within the list, and
  ``relevant_total`` how many the whole index holds. With BEIR-style judgements the same measures
  run over documents (chunk ranks rolled up by best chunk) and their relevant documents.
- success@k: the share of queries with at least one relevant item in the top k [Success@k].
- recall@k: the mean over queries of the share of a query's relevant items found in the top k
  [R@k]. A needle query has one relevant item, the needle (whichever chunk holds it), so for needle
  queries recall@k equals success@k; it differs for BEIR-style queries with several relevant
  documents. (Before the rename in the README's changelog, ``recall_at_k`` held success@k for every kind of query.)
- precision@k: relevant items among the top k, divided by k, averaged over queries [P@k].
- MRR: the mean over all queries of 1 / hit_rank [RR]. nDCG@10: binary gains over the relevant
  items, DCG = sum 1/log2(rank + 1) over relevant ranks <= 10, divided by the ideal DCG of
  min(relevant_total, 10) relevant items at the top [nDCG@10].
- A miss counts as 0 in every measure: it stays in the denominator, never dropped. ``AVG`` over
  NULL ranks would drop the misses and inflate the figure (hits at rank 1 and 3 and one miss: MRR
  0.44, not 0.67), so every mean here is ``coalesce``-d first.
- Every proportion (success@k; recall@k where every query has one relevant item; precision@k over
  the k x queries slots) carries its Wilson score 95 % interval; MRR, nDCG@10 and recall@k over
  queries with several relevant items, means of per-query values, a normal-approximation 95 %
  interval (mean +- 1.96 standard errors, clipped to [0, 1]).
- Out-of-domain queries have no right answer: they stay in ``retrieval_results`` (to calibrate a
  refusal threshold) and are left out of every measure here.

- The unit of evidence is the needle (``catalog.UNIT``): every figure is the mean over needles of each
  needle's mean over its phrasings (``by_needle``, then ``aggregated``), and its interval counts needles,
  not queries; ``needles`` and ``queries`` say how many of each. Grouped by ``phrasing``, a needle has one
  query there, and the figures are per phrasing.
- success within a context budget and the context costs read ``context_tokens``, the running total of the
  returned chunks' content tokens (``lib/retrieve/context.py``).

Tables and views: ``retrieval_results`` keeps every evaluation run's rows (``run_id``), never
overwritten; ``evaluation_runs`` has one row per run with its time and stamps; ``latest_results``
is the newest run; ``query_measures`` the per-query measures of the newest run, ``metrics`` their
means by model, revision, strategy, retriever and phrasing, and ``metrics_history`` the same per run.
"""

from __future__ import annotations

from typing import Sequence

import duckdb
import pyarrow as pa

from rag_assets.lib.evaluate import catalog
from rag_assets.lib.evaluate.intervals import sql_macros
from rag_assets.lib.retrieve.ann import RECALL_DEPTHS
from rag_assets.lib.store.stamps import EXTERNAL_MODEL

GROUPABLE = ("model", "revision", "strategy", "retriever", "phrasing")
# columns of ``retrieval_results`` the views read that a row may lack (recorded before they existed; a row
# without a needle id is its own unit)
VIEW_COLUMNS = {"needle_id": "VARCHAR", "context_tokens": "BIGINT[]", "content_tokens": "BIGINT[]"}


def budgets_of(connection: duckdb.DuckDBPyConnection) -> tuple[int, ...]:
    """The context budgets the stored views evaluate (their ``hit_in_<B>_tokens`` columns); () before any run."""
    names = [row[0] for row in connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'query_measures'").fetchall()]
    return catalog.budgets_in(names)


def per_query(table: str, budgets: Sequence[int]) -> str:
    """SQL: the judged rows of ``table`` with every measure's and cost's per-query column."""
    columns = ",\n    ".join(f"{m.per_query} AS {m.column}"
                              for m in (*catalog.measures(tuple(budgets)), *catalog.costs(tuple(budgets))))
    return f"SELECT *,\n    {columns}\nFROM {table}\nWHERE query_kind <> 'out_of_domain'"


def query_measures_view(budgets: Sequence[int] = catalog.DEFAULT_BUDGETS) -> str:
    """SQL: the view of the per-query measures of the newest run (needle and document queries)."""
    return f"CREATE OR REPLACE VIEW query_measures AS\n{per_query('latest_results', budgets)}\n"


def by_needle(source: str, group: Sequence[str], budgets: Sequence[int]) -> str:
    """SQL: the per-query rows of ``source`` as one row per needle (``catalog.UNIT``) of each group, each
    column the mean over the needle's phrasings, with how many queries it had and their latencies."""
    values = ", ".join(f"avg({m.column}) AS {m.column}"
                       for m in (*catalog.measures(tuple(budgets)), *catalog.costs(tuple(budgets))))
    keys = ", ".join(group)
    return (f"SELECT {keys}, {catalog.UNIT} AS unit, any_value(query_kind) AS query_kind, count(*) AS queries, "
            f"list(latency_ms) AS latencies, {values}\nFROM ({source}) AS per_query GROUP BY {keys}, unit")


def aggregated(source: str, group: Sequence[str], budgets: Sequence[int], measures=None) -> str:
    """SQL: each group's figures over its needles, with their intervals: how many needles and queries, every
    measure (or those given), the context costs and the median latency over the queries."""
    chosen = measures if measures is not None else (*catalog.measures(tuple(budgets)), *catalog.costs(tuple(budgets)))
    figures = ",\n    ".join(["count(*) AS needles", "sum(queries)::BIGINT AS queries",
                               *(m.aggregate() for m in chosen), *catalog.TIMINGS])
    keys = ", ".join(group)
    return f"SELECT {keys},\n    {figures}\nFROM ({by_needle(source, group, budgets)}) AS needles GROUP BY {keys}"


def table_exists(connection: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether the database holds a table or view of that name."""
    return connection.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                              [name]).fetchall()[0][0] > 0


def create_schema(connection: duckdb.DuckDBPyConnection) -> None:
    connection.execute(sql_macros())
    connection.execute(
        "CREATE TABLE IF NOT EXISTS evaluation_runs (run_id VARCHAR PRIMARY KEY, created_at TIMESTAMP, "
        "dagster_run_id VARCHAR, eval_version VARCHAR, eval_hash VARCHAR, snapshot_id VARCHAR, "
        "pipeline_version VARCHAR, configurations INTEGER, queries INTEGER, stamps JSON)")
    # what the run was asked to do (the corpus, models, strategies, retrievers, the decision rule, ...), so that
    # two runs can be told apart by more than their stamps; empty for runs recorded before it was kept
    connection.execute("ALTER TABLE evaluation_runs ADD COLUMN IF NOT EXISTS settings JSON")


def write_results(connection: duckdb.DuckDBPyConnection, results, run: dict | None = None,
                  budgets: Sequence[int] = catalog.DEFAULT_BUDGETS) -> str:
    """Append ``results`` (an Arrow table) as a new evaluation run and rebuild the views, with success and
    context at each of the context ``budgets``.

    ``run`` adds what the run table records (dagster_run_id, eval_version, eval_hash, settings). Returns the
    run id. Earlier runs are kept: nothing is overwritten; a column that earlier runs did not have is
    added, empty for them.
    """
    import json
    import uuid

    create_schema(connection)
    run = dict(run or {})
    run_id = run.get("run_id") or uuid.uuid4().hex[:16]
    connection.register("incoming_results", results)
    if table_exists(connection, "retrieval_results"):
        stored = {row[0] for row in connection.sql("DESCRIBE retrieval_results").fetchall()}
        for name, kind, *_ in connection.sql("DESCRIBE incoming_results").fetchall():
            if name not in stored:
                connection.execute(f'ALTER TABLE retrieval_results ADD COLUMN "{name}" {kind}')
        connection.execute("INSERT INTO retrieval_results BY NAME SELECT ? AS run_id, * FROM incoming_results", [run_id])
    else:
        connection.execute("CREATE TABLE retrieval_results AS SELECT ? AS run_id, * FROM incoming_results", [run_id])
    stored = {row[0] for row in connection.sql("DESCRIBE retrieval_results").fetchall()}
    for name, kind in VIEW_COLUMNS.items():  # rows written before they were counted: no value, never a miss
        if name not in stored:
            connection.execute(f"ALTER TABLE retrieval_results ADD COLUMN {name} {kind}")
    stamps = connection.sql(
        "SELECT DISTINCT model, revision, strategy FROM incoming_results ORDER BY ALL").to_arrow_table().to_pylist()
    first = connection.sql("SELECT any_value(snapshot_id), any_value(pipeline_version), count(DISTINCT query_id) "
                           "FROM incoming_results").fetchall()[0] if "snapshot_id" in results.column_names else (None, None, 0)
    connection.execute(
        "INSERT INTO evaluation_runs (run_id, created_at, dagster_run_id, eval_version, eval_hash, snapshot_id, "
        "pipeline_version, configurations, queries, stamps, settings) VALUES (?, now(), ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [run_id, run.get("dagster_run_id"), run.get("eval_version"), run.get("eval_hash"), first[0], first[1],
         len(stamps), first[2], json.dumps(stamps), json.dumps(run.get("settings") or {}, sort_keys=True)])
    connection.unregister("incoming_results")
    connection.execute(
        "CREATE OR REPLACE VIEW latest_results AS SELECT * FROM retrieval_results WHERE run_id = "
        "(SELECT run_id FROM evaluation_runs ORDER BY created_at DESC, run_id LIMIT 1)")
    connection.execute(query_measures_view(budgets))
    connection.execute(f"CREATE OR REPLACE VIEW metrics AS\n{aggregated('SELECT * FROM query_measures', GROUPABLE, budgets)}")
    connection.execute(f"CREATE OR REPLACE VIEW metrics_history AS\n"
                       f"{aggregated(per_query('retrieval_results', budgets), ('run_id', *GROUPABLE), budgets)}")
    if {"chunk_ids", "stage_ms"} <= set(results.column_names):
        connection.execute(ann_recall_view())
    return run_id


# the share of the exact (dense) top k that the HNSW graph (ann) returned, per model and strategy, over
# every query of the latest run (out-of-domain ones too: a vector index serves every query)
def ann_recall_view() -> str:
    """SQL: the view ``ann_recall``."""
    return f"""
CREATE OR REPLACE VIEW ann_recall AS
SELECT a.model, a.strategy, count(*) AS queries,
    {", ".join(f"avg(len(list_intersect(a.chunk_ids[1:{k}], d.chunk_ids[1:{k}])) / least({k}, len(d.chunk_ids))) "
               f"AS ann_recall_at_{k}" for k in RECALL_DEPTHS)},
    median(a.stage_ms) AS ann_median_ms, median(d.stage_ms) AS dense_median_ms
FROM latest_results a JOIN latest_results d USING (model, strategy, query_id)
WHERE a.retriever = 'ann' AND d.retriever = 'dense' AND len(d.chunk_ids) > 0
GROUP BY ALL ORDER BY a.model, a.strategy
"""


def write_chunk_stats(connection: duckdb.DuckDBPyConnection, chunk_tokens, chunk_quality, rates=None) -> None:
    """Replace ``chunk_stats``: one row per model and strategy with what the strategy costs.

    ``chunk_tokens`` has one row per embedded chunk (model, strategy, tokens, header_tokens,
    truncated); ``chunk_quality`` one row per strategy (sizes, answers destroyed); ``rates`` one row per
    model (model, tokens_per_second: its measured embedding rate), which turns the tokens embedded into
    the seconds embedding the index takes (NULL for a model without a measured rate).
    """
    rates = rates if rates is not None else pa.table({"model": pa.array([], pa.string()),
                                                      "tokens_per_second": pa.array([], pa.float64())})
    connection.register("incoming_tokens", chunk_tokens)
    connection.register("incoming_quality", chunk_quality)
    connection.register("incoming_rates", rates)
    connection.execute(
        """
        CREATE OR REPLACE TABLE chunk_stats AS
        SELECT t.model, t.strategy, q.chunks, q.mean_characters, q.max_characters, q.mean_content_tokens,
               q.max_content_tokens,
               t.tokens_embedded, t.header_tokens, t.header_tokens / t.tokens_embedded AS header_token_share,
               r.tokens_per_second AS embedding_tokens_per_second,
               t.tokens_embedded / r.tokens_per_second AS embedding_seconds,
               t.truncated_chunks, q.needles, q.answers_destroyed, q.destroyed_needles
        FROM (
            SELECT model, strategy, sum(tokens)::BIGINT AS tokens_embedded,
                   sum(header_tokens)::BIGINT AS header_tokens,
                   count_if(truncated) AS truncated_chunks
            FROM incoming_tokens GROUP BY model, strategy
        ) AS t
        JOIN incoming_quality AS q USING (strategy)
        LEFT JOIN incoming_rates AS r USING (model)
        ORDER BY t.model, t.strategy
        """
    )
    for name in ("incoming_tokens", "incoming_quality", "incoming_rates"):
        connection.unregister(name)


def comparison(connection: duckdb.DuckDBPyConnection, by: Sequence[str] = ("model", "strategy", "retriever")):
    """Every measure and context cost with its interval over needles, grouped by the given columns (Arrow)."""
    unknown = [column for column in by if column not in GROUPABLE]
    if unknown or not by:
        raise ValueError(f"cannot group by {', '.join(unknown) or 'nothing'}; choose from {', '.join(GROUPABLE)}")
    sql = aggregated("SELECT * FROM query_measures", by, budgets_of(connection))
    return connection.sql(f"{sql}\nORDER BY {', '.join(by)}").to_arrow_table()


def history(connection: duckdb.DuckDBPyConnection, model: str, strategy: str, retriever: str):
    """The measures kept per run (``Measure.history``: success@20, recall@20, MRR, success at each budget), each
    with its interval over needles, of one configuration in every evaluation run, oldest first."""
    budgets = budgets_of(connection)
    kept = [m for m in catalog.measures(budgets) if m.history]
    source = per_query("retrieval_results", budgets) + " AND model = $model AND strategy = $strategy AND retriever = $retriever"
    per_run = aggregated(source, ("run_id", "snapshot_id", "revision"), budgets, kept)
    return connection.sql(
        f"SELECT r.*, e.created_at FROM ({per_run}) AS r JOIN evaluation_runs AS e USING (run_id) "
        "ORDER BY e.created_at, r.run_id",
        params={"model": model, "strategy": strategy, "retriever": retriever}).to_arrow_table()


def _share(count: str, total: str, name: str) -> str:
    return (f"{count} / nullif({total}, 0) AS {name}, "
            f"CASE WHEN {total} > 0 THEN wilson_low({count}, {total}) END AS {name}_low, "
            f"CASE WHEN {total} > 0 THEN wilson_high({count}, {total}) END AS {name}_high")


def write_threshold_sweep(connection: duckdb.DuckDBPyConnection, sweep) -> None:
    """Replace ``threshold_sweep`` (every cut of every calibrated configuration) and the view
    ``suggested_cuts`` (the suggested cut of each, with its shares and Wilson intervals)."""
    create_schema(connection)
    connection.register("incoming_sweep", sweep)
    connection.execute("CREATE OR REPLACE TABLE threshold_sweep AS SELECT * FROM incoming_sweep")
    connection.unregister("incoming_sweep")
    connection.execute(
        "CREATE OR REPLACE VIEW suggested_cuts AS SELECT model, revision, strategy, retriever, cut, in_domain, "
        "out_of_domain, answered_with_needle, answered_without_needle, in_domain_refused, bluffs, bluffs_near, "
        f"bluffs_off_topic, {_share('answered_with_needle', 'in_domain', 'answered')}, "
        f"{_share('bluffs', 'out_of_domain', 'bluff')}, {_share('in_domain_refused', 'in_domain', 'refused')}, "
        "worst_in_domain, best_out_of_domain, separable, auroc, auroc_low, auroc_high "
        "FROM threshold_sweep WHERE suggested ORDER BY model, strategy, retriever")


def mixed_latest_stamps(connection: duckdb.DuckDBPyConnection) -> list[str]:
    """What makes the latest evaluation run a mix of builds (several corpus snapshots, pipeline or
    extractor versions, or weights revisions of one model), one line each; [] when it is one build.
    Runs recorded since stamps are checked before writing are never mixed; an older file may be."""
    problems = []
    # an external retriever is its own build: each key's index version is its own, never a mix with another's
    model = f"CASE WHEN model = '{EXTERNAL_MODEL}' THEN model || ' ' || retriever ELSE model END"
    for column, per in (("snapshot_id", None), ("pipeline_version", None), ("extractor_version", None),
                        ("revision", "model")):
        group = f"GROUP BY {model}" if per else ""
        rows = connection.sql(f"SELECT {model + ', ' if per else ''}list(DISTINCT {column} ORDER BY {column}) AS v "
                              f"FROM latest_results {group}").fetchall()
        for row in rows:
            values = row[-1]
            if len(values) > 1:
                problems.append(f"{column} {', '.join(map(str, values))}" + (f" for {per} {row[0]}" if per else ""))
    return problems


def stored_configurations(connection: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    """(model, strategy, retriever) of every configuration in the newest evaluation run, sorted."""
    return connection.sql("SELECT DISTINCT model, strategy, retriever FROM latest_results ORDER BY ALL").fetchall()


def paired_comparisons(connection: duckdb.DuckDBPyConnection):
    """The stored paired tests (table ``comparisons``), as Arrow."""
    return connection.sql("SELECT * FROM comparisons").to_arrow_table()


def suggested_cuts(connection: duckdb.DuckDBPyConnection):
    """The suggested refusal cuts (view ``suggested_cuts``) as Arrow, or None when nothing was calibrated."""
    return connection.sql("SELECT * FROM suggested_cuts").to_arrow_table() \
        if table_exists(connection, "suggested_cuts") else None


def ann_recall(connection: duckdb.DuckDBPyConnection) -> list[dict]:
    """The HNSW graph's recall against exact search per model and strategy (view ``ann_recall``); [] without it."""
    return connection.sql("SELECT * FROM ann_recall").to_arrow_table().to_pylist() \
        if table_exists(connection, "ann_recall") else []
