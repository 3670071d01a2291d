"""Retrieval metrics computed in DuckDB with GROUP BY, from one row per query and configuration.

Conventions:

- A query has one needle. ``hit_rank`` is the 1-based rank of the first retrieved chunk that
  holds the whole needle in its own document text, or NULL when no chunk of the list holds it.
- recall@k is the share of queries with at least one chunk holding the needle in the top k
  (with one relevant item per query TREC calls this success@k). A miss counts as 0: it is in the
  denominator, never dropped.
- MRR is the mean over all queries of ``1 / hit_rank``, a miss contributing 0. ``AVG`` over the
  NULL ranks would drop the misses and inflate the figure (hits at rank 1 and 3 and one miss:
  MRR 0.44, not 0.67), so every mean here is ``coalesce``-d first.
- Every proportion carries its Wilson score 95 % interval.
- Out-of-domain queries have no right answer: they stay in ``retrieval_results`` (to calibrate a
  refusal threshold) and are left out of every measure here.
"""

from __future__ import annotations

import math
from typing import Sequence

import duckdb

K_VALUES = (1, 4, 8, 20)
Z95 = 1.959963984540054
GROUPABLE = ("model", "revision", "strategy", "retriever", "phrasing")


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion successes / n."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


_MACROS = f"""
CREATE OR REPLACE MACRO wilson_low(x, n) AS
    ((x / n + {Z95}^2 / (2 * n)) - {Z95} * sqrt((x / n) * (1 - x / n) / n + {Z95}^2 / (4 * n * n)))
    / (1 + {Z95}^2 / n);
CREATE OR REPLACE MACRO wilson_high(x, n) AS
    ((x / n + {Z95}^2 / (2 * n)) + {Z95} * sqrt((x / n) * (1 - x / n) / n + {Z95}^2 / (4 * n * n)))
    / (1 + {Z95}^2 / n);
"""


def _metric_columns() -> str:
    columns = ["count(*) AS queries"]
    for k in K_VALUES:
        hits = f"count_if(hit_rank <= {k})"
        columns += [
            f"{hits} / count(*) AS recall_at_{k}",
            f"wilson_low({hits}, count(*)) AS recall_at_{k}_low",
            f"wilson_high({hits}, count(*)) AS recall_at_{k}_high",
        ]
    columns.append("avg(coalesce(1.0 / hit_rank, 0.0)) AS mrr")
    return ",\n    ".join(columns)


def write_results(connection: duckdb.DuckDBPyConnection, results) -> None:
    """Replace ``retrieval_results`` with ``results`` (an Arrow table) and rebuild the views."""
    connection.execute(_MACROS)
    connection.register("incoming_results", results)
    connection.execute("CREATE OR REPLACE TABLE retrieval_results AS SELECT * FROM incoming_results")
    connection.unregister("incoming_results")
    group = ", ".join(GROUPABLE)
    connection.execute(
        f"CREATE OR REPLACE VIEW metrics AS SELECT {group},\n    {_metric_columns()}\n"
        f"FROM retrieval_results WHERE query_kind <> 'out_of_domain' GROUP BY {group}"
    )


def write_chunk_stats(connection: duckdb.DuckDBPyConnection, chunk_tokens, chunk_quality) -> None:
    """Replace ``chunk_stats``: one row per model and strategy with what the strategy costs.

    ``chunk_tokens`` has one row per embedded chunk (model, strategy, tokens, header_tokens,
    truncated); ``chunk_quality`` one row per strategy (sizes, answers destroyed).
    """
    connection.register("incoming_tokens", chunk_tokens)
    connection.register("incoming_quality", chunk_quality)
    connection.execute(
        """
        CREATE OR REPLACE TABLE chunk_stats AS
        SELECT t.model, t.strategy, q.chunks, q.mean_characters, q.max_characters,
               t.tokens_embedded, t.header_tokens, t.header_tokens / t.tokens_embedded AS header_token_share,
               t.truncated_chunks, q.needles, q.answers_destroyed, q.destroyed_needles
        FROM (
            SELECT model, strategy, sum(tokens)::BIGINT AS tokens_embedded,
                   sum(header_tokens)::BIGINT AS header_tokens,
                   count_if(truncated) AS truncated_chunks
            FROM incoming_tokens GROUP BY model, strategy
        ) AS t
        JOIN incoming_quality AS q USING (strategy)
        ORDER BY t.model, t.strategy
        """
    )
    connection.unregister("incoming_tokens")
    connection.unregister("incoming_quality")


def format_chunk_stats(table) -> str:
    """A Markdown table of ``chunk_stats``."""
    lines = [
        "| model | strategy | chunks | mean chars | max chars | tokens embedded | header tokens | header share "
        "| truncated | answers destroyed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in table.to_pylist():
        destroyed = f"{row['answers_destroyed']} of {row['needles']}"
        if row["destroyed_needles"]:
            destroyed += f" ({', '.join(row['destroyed_needles'])})"
        lines.append(
            f"| {row['model']} | {row['strategy']} | {row['chunks']} | {row['mean_characters']:.0f} "
            f"| {row['max_characters']} | {row['tokens_embedded']} | {row['header_tokens']} "
            f"| {100 * row['header_token_share']:.1f} % | {row['truncated_chunks']} | {destroyed} |"
        )
    return "\n".join(lines)


def comparison(connection: duckdb.DuckDBPyConnection, by: Sequence[str] = ("model", "strategy", "retriever")):
    """recall@k with intervals and MRR grouped by the given columns, as an Arrow table."""
    unknown = [column for column in by if column not in GROUPABLE]
    if unknown or not by:
        raise ValueError(f"cannot group by {', '.join(unknown) or 'nothing'}; choose from {', '.join(GROUPABLE)}")
    group = ", ".join(by)
    return connection.sql(
        f"SELECT {group},\n    {_metric_columns()}\nFROM retrieval_results WHERE query_kind <> 'out_of_domain'\n"
        f"GROUP BY {group} ORDER BY {group}"
    ).to_arrow_table()


def format_table(table, digits: int = 3) -> str:
    """A Markdown table of a comparison: recall@k as 'value [low, high]'."""
    names = table.column_names
    rows = table.to_pylist()
    keys = [n for n in names if n in GROUPABLE]
    headers = keys + ["queries"] + [f"R@{k}" for k in K_VALUES] + ["MRR"]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        cells = [str(row[k]) for k in keys] + [str(row["queries"])]
        for k in K_VALUES:
            cells.append(
                f"{row[f'recall_at_{k}']:.{digits}f} [{row[f'recall_at_{k}_low']:.2f}, {row[f'recall_at_{k}_high']:.2f}]"
            )
        cells.append(f"{row['mrr']:.{digits}f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
