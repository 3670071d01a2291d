"""The evaluation's tables as Markdown, for the report, the command line and the UI: the comparison,
the paired tests, the strategies' costs, the history of one configuration and the suggested refusal
cuts. Each is a list of columns for ``formats.markdown.markdown_table``."""

from __future__ import annotations

import pyarrow as pa

from rag_assets.lib.evaluate import catalog
from rag_assets.lib.evaluate.measures import GROUPABLE
from rag_assets.lib.formats.markdown import markdown_table, with_interval
from rag_assets.lib.retrieve.ann import RECALL_DEPTHS


def _interval(measure: str, digits: int = 3):
    """'value [low, high]'; '-' for a figure the row has no value of (no token counts in its run)."""
    return lambda row: "-" if row[measure] is None else with_interval(row[measure], row[f"{measure}_low"],
                                                                      row[f"{measure}_high"], digits)


def format_table(table: pa.Table, digits: int = 3) -> str:
    """A comparison (``measures.comparison``): the grouping columns, needles and queries, each shown figure as
    'value [low, high]' (success at each context budget among them) and the context the top 4 cost."""
    keys = [name for name in table.column_names if name in GROUPABLE]
    measures = [(measure.name, measure.label) for measure in catalog.measures(catalog.budgets_in(table.column_names)) if measure.shown]
    columns = [(key, lambda row, key=key: row[key]) for key in keys]
    columns += [("needles", lambda row: row["needles"]), ("queries", lambda row: row["queries"])]
    columns += [(label, _interval(measure, digits)) for measure, label in measures]
    if "context_at_4" in table.column_names:
        columns.append(("tokens@4", lambda row: "-" if row["context_at_4"] is None else f"{row['context_at_4']:.0f}"))
    return markdown_table(columns, table.to_pylist())


def _destroyed(row: dict) -> str:
    text = f"{row['answers_destroyed']} of {row['needles']}"
    return text + (f" ({', '.join(row['destroyed_needles'])})" if row["destroyed_needles"] else "")


def _embedding_time(row: dict) -> str:
    """The seconds embedding the strategy's chunks takes at the model's measured rate."""
    if row.get("embedding_seconds") is None:
        return "not measured"
    return f"{row['embedding_seconds']:.1f} s at {row['embedding_tokens_per_second']:,.0f} tokens/s"


def format_chunk_stats(table: pa.Table) -> str:
    """``chunk_stats``: what each strategy costs per model."""
    return markdown_table([
        ("model", lambda r: r["model"]), ("strategy", lambda r: r["strategy"]), ("chunks", lambda r: r["chunks"]),
        ("mean chars", lambda r: f"{r['mean_characters']:.0f}"), ("max chars", lambda r: r["max_characters"]),
        ("mean context tokens", lambda r: f"{r['mean_content_tokens']:.0f}"),
        ("max context tokens", lambda r: r["max_content_tokens"]),
        ("tokens embedded", lambda r: r["tokens_embedded"]), ("header tokens", lambda r: r["header_tokens"]),
        ("header share", lambda r: f"{100 * r['header_token_share']:.1f} %"),
        ("embedding time", _embedding_time),
        ("truncated", lambda r: r["truncated_chunks"]), ("answers destroyed", _destroyed),
    ], table.to_pylist())


def format_history(table: pa.Table) -> str:
    """``measures.history``: one configuration's recall@20, MRR and success at each budget in every
    evaluation run, with intervals over needles."""
    budgets = [(m.name, m.label) for m in catalog.measures(catalog.budgets_in(table.column_names)) if m.name.endswith("_tokens")]
    return markdown_table([
        ("run", lambda r: r["run_id"]), ("date (UTC)", lambda r: f"{r['created_at']:%Y-%m-%d %H:%M}"),
        ("snapshot", lambda r: r["snapshot_id"]), ("revision", lambda r: r["revision"]),
        ("needles", lambda r: r["needles"]), ("queries", lambda r: r["queries"]),
        ("recall@20", _interval("recall_at_20")), ("MRR", _interval("mrr")),
        *((label, _interval(name)) for name, label in budgets),
    ], table.to_pylist())


def _share(count: str, total: str, interval: str):
    return lambda r: f"{r[count]} of {r[total]} [{r[interval + '_low']:.2f}, {r[interval + '_high']:.2f}]"


def _distance(name: str, missing: str):
    """A distance to three places, or what its absence means (a retriever whose hits never held a needle has
    no in-domain distance to calibrate on)."""
    return lambda row: missing if row[name] is None else f"{row[name]:.3f}"


def format_suggested_cuts(table: pa.Table) -> str:
    """``suggested_cuts``: each calibrated configuration's separation and what its suggested cut does."""
    return markdown_table([
        ("model", lambda r: r["model"]), ("strategy", lambda r: r["strategy"]),
        ("retriever", lambda r: r["retriever"]),
        ("worst in-domain", _distance("worst_in_domain", "no needle found")),
        ("best out-of-domain", _distance("best_out_of_domain", "no out-of-domain query")), ("AUROC", _interval("auroc")),
        ("cut", lambda r: f"{r['cut']:.3f}"),
        ("answered with needle", _share("answered_with_needle", "in_domain", "answered")),
        ("refused", lambda r: r["in_domain_refused"]),
        ("bluffs (near, off-topic)",
         lambda r: f"{_share('bluffs', 'out_of_domain', 'bluff')(r)} ({r['bluffs_near']}, {r['bluffs_off_topic']})"),
    ], [row for row in table.to_pylist() if row["auroc"] is not None])


def format_comparisons(table: pa.Table) -> str:
    """The paired tests of one run: the family, what is compared, both values, wins and losses over needles,
    the raw and the adjusted p."""
    def side(prefix: str):
        return lambda r: (f"{r['model'] if prefix == 'a' else r['b_model']}: {r[prefix + '_strategy']} x "
                          f"{r[prefix + '_retriever']}")

    return markdown_table([
        ("family", lambda r: r["family"]), ("comparison", lambda r: r["comparison"]), ("A", side("a")),
        ("B", side("b")), ("measure", lambda r: r["measure"]), ("needles", lambda r: r["needles"]),
        ("A value", lambda r: f"{r['a_value']:.3f}"), ("B value", lambda r: f"{r['b_value']:.3f}"),
        ("wins/losses", lambda r: f"+{r['wins']}/-{r['losses']}"), ("p", lambda r: f"{r['p_value']:.2g}"),
        ("adjusted p", lambda r: f"{r['p_adjusted']:.2g}"), ("test", lambda r: r["test"].split(" (")[0]),
    ], table.to_pylist())


def format_ann_recall(rows: list[dict]) -> str:
    """``ann_recall``: the share of the exact top k the HNSW graph returns, per model and strategy."""
    return markdown_table([
        ("model", lambda r: r["model"]), ("strategy", lambda r: r["strategy"]), ("queries", lambda r: r["queries"]),
        *((f"k={k}", lambda r, k=k: f"{r[f'ann_recall_at_{k}']:.3f}") for k in RECALL_DEPTHS),
        ("ann median ms", lambda r: f"{r['ann_median_ms']:.2f}"),
        ("dense median ms", lambda r: f"{r['dense_median_ms']:.2f}"),
    ], rows)
