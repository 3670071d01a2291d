"""The commands that read stored results: ``report``, ``history`` and ``export``.

They open ``metrics.duckdb`` read-only (any number of readers beside the one writer) and never run
the graph.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rag_assets.cli.exit_codes import EXIT_FAILED, EXIT_NO_RESULTS, EXIT_OK
from rag_assets.lib.store import paths
from rag_assets.lib.store.database import read_only

CONFIGURATION = ["model", "strategy", "retriever"]


def stored_results(home: Path) -> Path | None:
    """The metrics database (brought up to date from the object store, when one is configured), or
    None (having said what to run) when no evaluation wrote one yet."""
    database = paths.stored_database(home)
    if database.exists():
        return database
    print(f"no results yet at {database}: run `rag-assets evaluate` first", file=sys.stderr)
    return None


def report(home: Path, by: list[str], fmt: str, paired: bool = False) -> int:
    """The comparison grouped by ``by`` (and with ``paired``, the paired tests), the approximate
    search's recall and the suggested refusal cuts, as Markdown tables or JSON."""
    from rag_assets.lib.evaluate.comparisons import comparisons_heading
    from rag_assets.lib.evaluate.measures import (
        ann_recall,
        comparison,
        mixed_latest_stamps,
        paired_comparisons,
        suggested_cuts,
    )
    from rag_assets.lib.evaluate.tables import (
        format_ann_recall,
        format_comparisons,
        format_suggested_cuts,
        format_table,
    )

    database = stored_results(home)
    if database is None:
        return EXIT_NO_RESULTS
    with read_only(database) as connection:
        mixed = mixed_latest_stamps(connection)
        if mixed:
            print(f"rag-assets report: refused: the latest evaluation run in {database} mixes builds ("
                  f"{'; '.join(mixed)}), so its figures are not comparable. It was recorded before stamps were "
                  "checked before writing; run `rag-assets evaluate --rebuild` to record a consistent one.",
                  file=sys.stderr)
            return EXIT_FAILED
        table = comparison(connection, by)
        tests = paired_comparisons(connection) if paired else None
        cuts = suggested_cuts(connection)
        recall = ann_recall(connection)
    if fmt == "json":
        print(json.dumps({"metrics": table.to_pylist(), "comparisons": tests.to_pylist(),
                          "suggested_cuts": cuts.to_pylist() if cuts is not None else []} if paired
                         else table.to_pylist(), indent=2, default=str))
        return EXIT_OK
    print(format_table(table))
    if paired:
        print(f"\n{comparisons_heading()}:\n")
        print(format_comparisons(tests))
    if recall:
        print("\nApproximate search (ann: an HNSW graph, faiss) against exact search (dense), the share of the "
              "exact top k it returns:\n")
        print(format_ann_recall(recall))
    if cuts is not None:
        print("\nWhen to refuse (suggested distance cuts; `rag-assets ask` uses them):\n")
        print(format_suggested_cuts(cuts))
    return EXIT_OK


def report_command(args: argparse.Namespace, home: Path) -> int:
    return report(home, [c.strip() for c in args.by.split(",") if c.strip()], args.format, args.paired)


def history_command(args: argparse.Namespace, home: Path) -> int:
    """recall@20 with its interval and MRR of one configuration in every evaluation run."""
    from rag_assets.lib.embed.models import DEFAULT_MODEL
    from rag_assets.lib.evaluate.comparisons import REPORT_STRATEGY, STRATEGY_RETRIEVER
    from rag_assets.lib.evaluate.measures import history
    from rag_assets.lib.evaluate.tables import format_history

    database = stored_results(home)
    if database is None:
        return EXIT_NO_RESULTS
    model = args.model or DEFAULT_MODEL
    strategy, retriever = args.strategy or REPORT_STRATEGY, args.retriever or STRATEGY_RETRIEVER
    with read_only(database) as connection:
        table = history(connection, model, strategy, retriever)
    if not len(table):
        print(f"no evaluation run holds {model} x {strategy} x {retriever}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{model} x {strategy} x {retriever}, every evaluation run:\n")
    print(format_history(table))
    return EXIT_OK


def export_command(args: argparse.Namespace, home: Path) -> int:
    """The newest run's configurations as TREC run files with their qrels."""
    import pyarrow.parquet as pq

    from rag_assets.lib.evaluate.measures import stored_configurations
    from rag_assets.lib.evaluate.trec import stored_rows, trec_lines, write_trec

    database = stored_results(home)
    if database is None:
        return EXIT_NO_RESULTS
    wanted = (args.model, args.strategy, args.retriever)
    with read_only(database) as connection:
        configurations = [c for c in stored_configurations(connection)
                          if all(want in (None, have) for want, have in zip(wanted, c))]
        rows = {c: stored_rows(connection, *c) for c in configurations}
    if not configurations:
        print("no stored configuration matches --model, --strategy and --retriever", file=sys.stderr)
        return EXIT_FAILED
    evaluation = pq.read_table(paths.stored_partition(home, "eval_set"), columns=["query_id", "relevant_doc_ids"])
    relevant_docs = {r["query_id"]: r["relevant_doc_ids"] for r in evaluation.to_pylist()}
    for model, strategy, retriever in configurations:
        chunks = pq.read_table(paths.stored_partition(home, "chunks", [("strategy", strategy)]),
                               columns=["chunk_id", "doc_id"]).to_pylist()
        run, qrels = trec_lines(rows[(model, strategy, retriever)], {c["chunk_id"]: c["doc_id"] for c in chunks},
                                relevant_docs, f"rag_assets:{model}:{strategy}:{retriever}")
        run_path, _ = write_trec(Path(args.folder), f"{model}__{strategy}__{retriever}", run, qrels)
        print(f"{run_path} and .qrels: {len(run)} run lines, {len(qrels)} judgements")
    return EXIT_OK
