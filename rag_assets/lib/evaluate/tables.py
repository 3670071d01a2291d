"""The evaluation's tables as Markdown, for the report, the command line and the UI: the comparison,
the paired tests, the strategies' costs, the history of one configuration and the suggested refusal
cuts. Each is a list of columns for ``formats.markdown.markdown_table``."""

from __future__ import annotations

import pyarrow as pa

from rag_assets.lib.evaluate import catalog
from rag_assets.lib.evaluate.comparisons import REPORT_STRATEGY
from rag_assets.lib.evaluate.measures import GROUPABLE
from rag_assets.lib.formats.markdown import markdown_table, with_interval
from rag_assets.lib.retrieve.ann import RECALL_DEPTHS


def _interval(measure: str, digits: int = 3):
    return lambda row: with_interval(row[measure], row[f"{measure}_low"], row[f"{measure}_high"], digits)


def format_table(table: pa.Table, digits: int = 3) -> str:
    """A comparison (``measures.comparison``): the grouping columns, queries, and each figure as 'value [low, high]'."""
    keys = [name for name in table.column_names if name in GROUPABLE]
    measures = [(measure.name, measure.label) for measure in catalog.MEASURES if measure.shown]
    columns = [(key, lambda row, key=key: row[key]) for key in keys] + [("queries", lambda row: row["queries"])]
    columns += [(label, _interval(measure, digits)) for measure, label in measures]
    return markdown_table(columns, table.to_pylist())


def _destroyed(row: dict) -> str:
    text = f"{row['answers_destroyed']} of {row['needles']}"
    return text + (f" ({', '.join(row['destroyed_needles'])})" if row["destroyed_needles"] else "")


def format_chunk_stats(table: pa.Table) -> str:
    """``chunk_stats``: what each strategy costs per model."""
    return markdown_table([
        ("model", lambda r: r["model"]), ("strategy", lambda r: r["strategy"]), ("chunks", lambda r: r["chunks"]),
        ("mean chars", lambda r: f"{r['mean_characters']:.0f}"), ("max chars", lambda r: r["max_characters"]),
        ("tokens embedded", lambda r: r["tokens_embedded"]), ("header tokens", lambda r: r["header_tokens"]),
        ("header share", lambda r: f"{100 * r['header_token_share']:.1f} %"),
        ("truncated", lambda r: r["truncated_chunks"]), ("answers destroyed", _destroyed),
    ], table.to_pylist())


def format_history(table: pa.Table) -> str:
    """``measures.history``: one configuration's recall@20 and MRR in every evaluation run."""
    return markdown_table([
        ("run", lambda r: r["run_id"]), ("date (UTC)", lambda r: f"{r['created_at']:%Y-%m-%d %H:%M}"),
        ("snapshot", lambda r: r["snapshot_id"]), ("revision", lambda r: r["revision"]),
        ("queries", lambda r: r["queries"]), ("recall@20", _interval("recall_at_20")),
        ("MRR", lambda r: f"{r['mrr']:.3f}"),
    ], table.to_pylist())


def _share(count: str, total: str, interval: str):
    return lambda r: f"{r[count]} of {r[total]} [{r[interval + '_low']:.2f}, {r[interval + '_high']:.2f}]"


def format_suggested_cuts(table: pa.Table) -> str:
    """``suggested_cuts``: each calibrated configuration's separation and what its suggested cut does."""
    return markdown_table([
        ("model", lambda r: r["model"]), ("strategy", lambda r: r["strategy"]),
        ("retriever", lambda r: r["retriever"]), ("worst in-domain", lambda r: f"{r['worst_in_domain']:.3f}"),
        ("best out-of-domain", lambda r: f"{r['best_out_of_domain']:.3f}"), ("AUROC", _interval("auroc")),
        ("cut", lambda r: f"{r['cut']:.3f}"),
        ("answered with needle", _share("answered_with_needle", "in_domain", "answered")),
        ("refused", lambda r: r["in_domain_refused"]),
        ("bluffs (near, off-topic)",
         lambda r: f"{_share('bluffs', 'out_of_domain', 'bluff')(r)} ({r['bluffs_near']}, {r['bluffs_off_topic']})"),
    ], [row for row in table.to_pylist() if row["auroc"] is not None])


def format_comparisons(table: pa.Table, strategy: str | None = REPORT_STRATEGY) -> str:
    """The paired tests: the strategy comparisons, and the retriever comparisons on one strategy."""
    def is_strategy_pair(row: dict) -> bool:
        return row["a_strategy"] != row["b_strategy"]

    rows = [row for row in table.to_pylist() if is_strategy_pair(row) or not strategy or row["a_strategy"] == strategy]
    return markdown_table([
        ("model", lambda r: r["model"]), ("comparison", lambda r: r["comparison"]),
        ("strategy", lambda r: f"{r['a_strategy']} vs {r['b_strategy']}" if is_strategy_pair(r) else r["a_strategy"]),
        ("measure", lambda r: r["measure"]), ("queries", lambda r: r["queries"]),
        ("A", lambda r: f"{r['a_value']:.3f}"), ("B", lambda r: f"{r['b_value']:.3f}"),
        ("wins/losses, p", lambda r: r["result"]), ("test", lambda r: r["test"].split(" (")[0]),
    ], rows)


def format_ann_recall(rows: list[dict]) -> str:
    """``ann_recall``: the share of the exact top k the HNSW graph returns, per model and strategy."""
    return markdown_table([
        ("model", lambda r: r["model"]), ("strategy", lambda r: r["strategy"]), ("queries", lambda r: r["queries"]),
        *((f"k={k}", lambda r, k=k: f"{r[f'ann_recall_at_{k}']:.3f}") for k in RECALL_DEPTHS),
        ("ann median ms", lambda r: f"{r['ann_median_ms']:.2f}"),
        ("dense median ms", lambda r: f"{r['dense_median_ms']:.2f}"),
    ], rows)
