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
    from rag_assets.lib.evaluate.comparisons import adjustment_label
    from rag_assets.lib.evaluate.decision import stored_decision, stored_ranking
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
    from rag_assets.lib.evaluate.verdict import verdict

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
        decision, ranking = stored_decision(connection), stored_ranking(connection)
        said = verdict(connection, home) if fmt != "json" else ""
    if fmt == "json":
        print(json.dumps({"decision": decision, "ranking": ranking, "metrics": table.to_pylist(),
                          "comparisons": tests.to_pylist(),
                          "suggested_cuts": cuts.to_pylist() if cuts is not None else []} if paired
                         else table.to_pylist(), indent=2, default=str))
        return EXIT_OK
    print(said + "\n")
    print(format_table(table))
    if paired:
        adjustment = adjustment_label(decision["adjustment"]) if decision else "none"
        print(f"\nPaired tests at {decision['budget'] if decision else '?'} context tokens, over needles (one family, "
              f"p adjusted by {adjustment}):\n")
        print(format_comparisons(tests))
    if recall:
        print("\nApproximate search (ann: an HNSW graph, faiss) against exact search (dense), the share of the "
              "exact top k it returns:\n")
        print(format_ann_recall(recall))
    if cuts is not None:
        print("\nWhen to refuse (suggested distance cuts; `rag-assets ask` uses them):\n")
        print(format_suggested_cuts(cuts))
    print("\n" + evaluation_page(database, home))
    return EXIT_OK


def evaluation_page(database: Path, home: Path) -> str:
    """The line naming the evaluation page (``report/index.html``), written again first when it is missing or
    older than the results; in a storage folder that cannot be written, the page as it is, or why there is none."""
    from rag_assets.lib.evaluate.page import PAGE, write_page

    page = home / "report" / PAGE
    if not page.exists() or page.stat().st_mtime < database.stat().st_mtime:
        try:
            page = write_page(database, home)
        except OSError as error:
            if not page.exists():
                return f"No evaluation page: {page} could not be written ({error})."
            return f"The evaluation page (older than the results: {error}): {page.as_uri()}"
    return f"The evaluation page (open it in a browser; it needs no network): {page.as_uri()}"


def report_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.lib.evaluate.measures import GROUPABLE
    from rag_assets.runner.failures import UsageError

    by = [c.strip() for c in args.by.split(",") if c.strip()]
    unknown = [column for column in by if column not in GROUPABLE]
    if unknown or not by:  # bad usage: exit 2, before anything is read
        raise UsageError(f"--by {args.by!r}: cannot group by {', '.join(unknown) or 'nothing'}; choose from "
                         f"{', '.join(GROUPABLE)}")
    return report(home, by, args.format, args.paired)


def history_command(args: argparse.Namespace, home: Path) -> int:
    """recall@20 with its interval and MRR of one configuration in every evaluation run."""
    from rag_assets.lib.embed.models import DEFAULT_MODEL
    from rag_assets.lib.evaluate.decision import stored_ranking
    from rag_assets.lib.evaluate.measures import history
    from rag_assets.lib.evaluate.report import REPORT_STRATEGY, STRATEGY_RETRIEVER
    from rag_assets.lib.evaluate.tables import format_history

    database = stored_results(home)
    if database is None:
        return EXIT_NO_RESULTS
    with read_only(database) as connection:
        # what is not given is that of the best ranked configuration within what is (without options: the
        # verdict's pick), else the report's defaults
        best = next((r for r in stored_ranking(connection) if (args.model or r["model"]) == r["model"]
                     and (args.strategy or r["strategy"]) == r["strategy"]
                     and (args.retriever or r["retriever"]) == r["retriever"]), {})
        model = args.model or best.get("model") or DEFAULT_MODEL
        strategy = args.strategy or best.get("strategy") or REPORT_STRATEGY
        retriever = args.retriever or best.get("retriever") or STRATEGY_RETRIEVER
        table = history(connection, model, strategy, retriever)
    if not len(table):
        print(f"no evaluation run holds {model} x {strategy} x {retriever}", file=sys.stderr)
        return EXIT_FAILED
    print(f"{model} x {strategy} x {retriever}, every evaluation run:\n")
    print(format_history(table))
    return EXIT_OK


def export_command(args: argparse.Namespace, home: Path) -> int:
    """The newest run's configurations as TREC run files with their qrels."""

    from rag_assets.lib.evaluate.measures import stored_configurations
    from rag_assets.lib.evaluate.trec import located_documents, stored_rows, trec_lines, write_trec
    from rag_assets.lib.store.stamps import EXTERNAL_MODEL

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
    folder = Path(args.folder)
    names = [f"{model}__{strategy}__{retriever}" for model, strategy, retriever in configurations]
    existing = [str(folder / f"{name}{suffix}") for name in names for suffix in (".run", ".qrels")
                if (folder / f"{name}{suffix}").exists()]
    if existing and not args.force:
        raise ExportRefused(f"{len(existing)} of the files to write already exist ({', '.join(existing[:4])}"
                            f"{', ...' if len(existing) > 4 else ''}); nothing was written. Give --force to replace "
                            "them, or choose another folder")
    relevant_docs = {r["query_id"]: r["relevant_doc_ids"] for r in
                     paths.read_stored(paths.stored_partition(home, "eval_set"), "eval_set").to_pylist()}
    for (model, strategy, retriever), name in zip(configurations, names):
        if model == EXTERNAL_MODEL:  # a team's retriever: its own passages, by where each was located
            chunk_doc = located_documents(rows[(model, strategy, retriever)])
        else:
            dimensions = [("strategy", strategy)]
            chunks = paths.read_stored(paths.stored_partition(home, "chunks", dimensions), "chunks", dimensions)
            chunk_doc = dict(zip(chunks.column("chunk_id").to_pylist(), chunks.column("doc_id").to_pylist()))
        run, qrels = trec_lines(rows[(model, strategy, retriever)], chunk_doc, relevant_docs,
                                f"rag_assets:{model}:{strategy}:{retriever}")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            run_path, _ = write_trec(folder, name, run, qrels)
        except OSError as error:
            raise ExportRefused(f"cannot write {error.filename or folder} ({error.strerror or error}): the export "
                                f"folder {folder} must be writable") from None
        print(f"{run_path} and .qrels: {len(run)} run lines, {len(qrels)} judgements")
    return EXIT_OK


class ExportRefused(RuntimeError):
    """An export that would overwrite files, or cannot write its folder: one paragraph, nothing lost."""

    paragraph = True
