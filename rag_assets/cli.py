"""rag-assets: a thin command line over the graph and its stored results."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from rag_assets import __version__
from rag_assets.lib import paths

EXIT_OK = 0
EXIT_FAILED = 1  # a run, a check or a command failed
EXIT_USAGE = 2  # bad usage: nothing ran
EXIT_REFUSED = 3  # `ask --strict`: the index said NO ANSWER
EXIT_NO_RESULTS = 4  # nothing to report yet: no evaluation has written results to this storage folder
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM


def _results(home: Path) -> Path | None:
    """The metrics database (brought up to date from the object store, when one is configured), or
    None (having said what to run) when no evaluation wrote one yet."""
    database = paths.stored_database(home)
    if database.exists():
        return database
    print(f"no results yet at {database}: run `rag-assets evaluate` first", file=sys.stderr)
    return None


def _report(home: Path, by: list[str], fmt: str, paired: bool = False) -> int:
    import duckdb

    from rag_assets.lib.comparisons import comparisons_heading, format_comparisons
    from rag_assets.lib.metrics import (
        comparison,
        format_suggested_cuts,
        format_table,
        mixed_latest_stamps,
        table_exists,
    )

    database = _results(home)
    if database is None:
        return EXIT_NO_RESULTS
    with duckdb.connect(str(database), read_only=True) as connection:
        mixed = mixed_latest_stamps(connection)
        if mixed:
            print(f"rag-assets report: refused: the latest evaluation run in {database} mixes builds ("
                  f"{'; '.join(mixed)}), so its figures are not comparable. It was recorded before stamps were "
                  "checked before writing; run `rag-assets evaluate --rebuild` to record a consistent one.",
                  file=sys.stderr)
            return EXIT_FAILED
        table = comparison(connection, by)
        tests = connection.sql("SELECT * FROM comparisons").to_arrow_table() if paired else None
        cuts = connection.sql("SELECT * FROM suggested_cuts").to_arrow_table() \
            if table_exists(connection, "suggested_cuts") else None
        ann = connection.sql("SELECT * FROM ann_recall").fetchall() if table_exists(connection, "ann_recall") else []
    if fmt == "json":
        print(json.dumps({"metrics": table.to_pylist(), "comparisons": tests.to_pylist(),
                          "suggested_cuts": cuts.to_pylist() if cuts is not None else []} if paired
                         else table.to_pylist(), indent=2, default=str))
    else:
        print(format_table(table))
        if paired:
            print(f"\n{comparisons_heading()}:\n")
            print(format_comparisons(tests))
        if ann:
            print("\nApproximate search (ann: an HNSW graph, faiss) against exact search (dense), the share of the "
                  "exact top k it returns:\n")
            print("| model | strategy | queries | k=1 | k=10 | k=25 | ann median ms | dense median ms |")
            print("|---|---|---|---|---|---|---|---|")
            for model, strategy, queries, at1, at10, at25, ann_ms, dense_ms in ann:
                print(f"| {model} | {strategy} | {queries} | {at1:.3f} | {at10:.3f} | {at25:.3f} | {ann_ms:.2f} | "
                      f"{dense_ms:.2f} |")
        if cuts is not None:
            print("\nWhen to refuse (suggested distance cuts; `rag-assets ask` uses them):\n")
            print(format_suggested_cuts(cuts))
    return 0


def _history(home: Path, model: str | None, strategy: str | None, retriever: str | None) -> int:
    import duckdb

    from rag_assets.lib.comparisons import REPORT_STRATEGY, STRATEGY_RETRIEVER
    from rag_assets.lib.embedding import DEFAULT_MODEL
    from rag_assets.lib.metrics import format_history, history

    database = _results(home)
    if database is None:
        return EXIT_NO_RESULTS
    model, strategy, retriever = model or DEFAULT_MODEL, strategy or REPORT_STRATEGY, retriever or STRATEGY_RETRIEVER
    with duckdb.connect(str(database), read_only=True) as connection:
        table = history(connection, model, strategy, retriever)
    if not len(table):
        print(f"no evaluation run holds {model} x {strategy} x {retriever}", file=sys.stderr)
        return 1
    print(f"{model} x {strategy} x {retriever}, every evaluation run:\n")
    print(format_history(table))
    return 0




def _ask(args: argparse.Namespace, home: Path) -> int:
    import duckdb

    from rag_assets.lib import ask as asking
    from rag_assets.lib.embedding import ModelUnavailableError, load_model
    from rag_assets.lib.traces import record_trace

    database = paths.stored_database(home)
    try:
        needs_metrics = not (args.model and args.strategy and args.retriever and args.cut is not None)
        if needs_metrics and not database.exists():
            raise asking.AskError(f"no results yet at {database}: run `rag-assets evaluate` first, or give "
                                  "--model, --strategy, --retriever and --cut")
        model, strategy, retriever, cut = args.model, args.strategy, args.retriever, args.cut
        if needs_metrics:
            with duckdb.connect(str(database), read_only=True) as connection:
                model, strategy, retriever = asking.default_configuration(connection, model, strategy, retriever)
                cut = cut if cut is not None else asking.calibrated_cut(connection, model, strategy, retriever)
        embedder = load_model(model, onnx_dir=paths.onnx_dir(home))
        answer = asking.ask(asking.load_index(home, embedder, strategy), args.question, retriever, cut, args.k,
                            args.budget)
        cited = asking.verify_citations(Path(args.verify).read_text(encoding="utf-8"), answer.sources) \
            if args.verify else None
    except (asking.AskError, asking.CitationError, ModelUnavailableError, OSError) as error:
        print(f"rag-assets ask: {error}", file=sys.stderr)
        return 1
    record_trace(home, answer, cited)
    print(answer.to_json() if args.format == "json" else answer.text())
    if cited is not None:
        print(f"\ncitations verified: {', '.join(f'[{n}]' for n in cited) or 'none'}", file=sys.stderr)
    return EXIT_REFUSED if answer.refused and args.strict else 0


def _export(args: argparse.Namespace, home: Path) -> int:
    import duckdb
    import pyarrow.parquet as pq

    from rag_assets.lib.trec import stored_rows, trec_lines, write_trec

    database = _results(home)
    if database is None:
        return EXIT_NO_RESULTS
    with duckdb.connect(str(database), read_only=True) as connection:
        configurations = [c for c in connection.sql(
            "SELECT DISTINCT model, strategy, retriever FROM latest_results ORDER BY ALL").fetchall()
            if all(want in (None, have) for want, have in zip((args.model, args.strategy, args.retriever), c))]
        rows = {c: stored_rows(connection, *c) for c in configurations}
    if not configurations:
        print("no stored configuration matches --model, --strategy and --retriever", file=sys.stderr)
        return 1
    evaluation = pq.read_table(paths.stored_partition(home, "eval_set"), columns=["query_id", "relevant_doc_ids"])
    relevant_docs = {r["query_id"]: r["relevant_doc_ids"] for r in evaluation.to_pylist()}
    for model, strategy, retriever in configurations:
        chunks = pq.read_table(paths.stored_partition(home, "chunks", [("strategy", strategy)]),
                               columns=["chunk_id", "doc_id"]).to_pylist()
        run, qrels = trec_lines(rows[(model, strategy, retriever)], {c["chunk_id"]: c["doc_id"] for c in chunks},
                                relevant_docs, f"rag_assets:{model}:{strategy}:{retriever}")
        run_path, _ = write_trec(Path(args.folder), f"{model}__{strategy}__{retriever}", run, qrels)
        print(f"{run_path} and .qrels: {len(run)} run lines, {len(qrels)} judgements")
    return 0


def _progress(line: str) -> None:
    print(f"rag-assets: {line}", flush=True)


def _print_inputs(outcome) -> None:
    """The corpus and evaluation set a run was built on, and the evaluation set's checks."""
    extraction, evaluation = outcome.extraction, outcome.eval_set
    _progress(f"extracted_text: {extraction['documents']} documents ({extraction['documents_ok']} ok, "
              f"{extraction['documents_failed']} failed), {extraction['characters']} characters, "
              f"{extraction['sections']} sections")
    for doc_id, reason in extraction["failed"].items():
        _progress(f"  failed: {doc_id}: {reason}")
    checks = ", ".join(f"{c.name} {c.verdict}" for c in outcome.checks if c.asset == "eval_set")
    _progress(
        f"eval_set {evaluation['version']}: {evaluation['needles']} needles, {evaluation['needle_queries']} needle "
        f"queries, {evaluation['document_queries']} document queries, {evaluation['out_of_domain_queries']} "
        f"out-of-domain ({evaluation['out_of_domain_near']} near, {evaluation['out_of_domain_off_topic']} off-topic); "
        f"checks: {checks}")


def _evaluate(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.resources import RagSettings
    from rag_assets.runner import default_instance, materialize_all

    settings = RagSettings(
        home=str(home),
        corpus_dir=str(Path(args.corpus).resolve()),
        eval_set=str(Path(args.eval_set).resolve()),
        out_of_domain=str(Path(args.out_of_domain).resolve()) if args.out_of_domain else "",
        beir_split=args.beir_split,
        bm25_k1=args.bm25_k1, bm25_b=args.bm25_b, bm25_stopwords=args.bm25_stopwords, bm25_stemmer=args.bm25_stemmer,
        top_k=args.top_k,
    )
    instance = default_instance(home)
    outcome = materialize_all(settings, instance, model_keys=args.models, strategies=args.strategies, progress=_progress,
                              rebuild=args.rebuild)
    _print_inputs(outcome)
    if outcome.up_to_date:
        _progress(f"{len(outcome.up_to_date)} runs skipped as up to date (their inputs, settings and weights are those "
                  "they were built from; `evaluate --rebuild` runs them again)")
    print(f"\nresults in {paths.duckdb_path(home)}; report in {home / 'report' / 'report.md'}\n")
    return _report(home, ["model", "strategy", "retriever"], "table", paired=True)


def _backfill(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.resources import RagSettings
    from rag_assets.runner import backfill_model, default_instance

    settings = RagSettings(home=str(home), corpus_dir=str(Path(args.corpus).resolve()),
                           eval_set=str(Path(args.eval_set).resolve()),
                           out_of_domain=str(Path(args.out_of_domain).resolve()) if args.out_of_domain else "")
    backfill_model(settings, default_instance(home), args.model, strategies=args.strategies, progress=_progress)
    return _report(home, ["model", "strategy", "retriever"], "table")


def _ui(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.runner import ensure_dagster_home

    os.environ["DAGSTER_HOME"] = str(ensure_dagster_home(home))
    workspace = paths.PROJECT_ROOT / "workspace.yaml"
    command = [sys.executable, "-m", "dagster", "dev", "-w", str(workspace), "-p", str(args.port), "-h", args.host]
    os.chdir(paths.PROJECT_ROOT)
    os.execvp(command[0], command)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-assets",
        description="Measure a RAG retriever: corpus -> chunks -> embeddings -> retrieval -> metrics. "
        f"Outputs go to ${paths.HOME_ENV_VAR} (now {paths.storage_home()}).",
    )
    parser.add_argument("--version", action="version", version=f"rag-assets {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on failure, Dagster's log and the Python traceback (also RAG_ASSETS_DEBUG=1)")
    commands = parser.add_subparsers(dest="command")

    evaluate = commands.add_parser("evaluate", help="materialise the whole graph and print the comparison")
    evaluate.add_argument("--corpus", default=paths.corpus_dir(), help="folder of documents")
    evaluate.add_argument("--rebuild", action="store_true",
                          help="run every partition again, even those already up to date (to re-measure latency, say)")
    evaluate.add_argument("--eval-set", default=paths.eval_set(),
                          help="needle questions (JSON Lines), or a BEIR folder with queries.jsonl and qrels/")
    evaluate.add_argument("--out-of-domain", default=paths.out_of_domain(),
                          help="queries the corpus cannot answer (JSON Lines); '' for none")
    evaluate.add_argument("--beir-split", default="test", help="qrels split of a BEIR evaluation set")
    evaluate.add_argument("--models", nargs="+", help="embedding models (default: all registered)")
    evaluate.add_argument("--strategies", nargs="+", help="chunking strategies (default: all registered)")
    evaluate.add_argument("--top-k", type=int, default=25, help="chunks kept per query and retriever (default 25)")
    evaluate.add_argument("--bm25-k1", type=float, default=1.2, help="BM25 k1 (default 1.2)")
    evaluate.add_argument("--bm25-b", type=float, default=0.75, help="BM25 b (default 0.75)")
    evaluate.add_argument("--bm25-stopwords", choices=("none", "english"), default="none",
                          help="drop English stop words (Lucene's set) in BM25")
    evaluate.add_argument("--bm25-stemmer", default="none", help="Snowball stemmer for BM25 ('english'; default none)")

    backfill = commands.add_parser(
        "backfill", help="rebuild one model's embeddings, retrieval and metrics (after its weights changed)")
    backfill.add_argument("--model", required=True, help="registry key of the model")
    backfill.add_argument("--corpus", default=paths.corpus_dir(), help="as given to evaluate")
    backfill.add_argument("--eval-set", default=paths.eval_set(), help="as given to evaluate")
    backfill.add_argument("--out-of-domain", default=paths.out_of_domain(), help="as given to evaluate")
    backfill.add_argument("--strategies", nargs="+", help="chunking strategies (default: all registered)")

    report = commands.add_parser("report", help="print the comparison table from DuckDB")
    report.add_argument("--by", default="model,strategy,retriever", help="columns to group by, comma-separated")
    report.add_argument("--format", choices=("table", "json"), default="table")
    report.add_argument("--paired", action="store_true", help="also print the paired tests (table: comparisons)")

    history = commands.add_parser("history", help="recall@20 and MRR of one configuration in every evaluation run")
    history.add_argument("--model", help="registry key (default: all-MiniLM-L6-v2)")
    history.add_argument("--strategy", help="chunking strategy (default: boundaries_header)")
    history.add_argument("--retriever", help="retriever (default: dense)")

    ask = commands.add_parser(
        "ask", help="retrieve for a question: NO ANSWER, or numbered sources and the prompt it would send",
        description="Answers from the latest materialised index (never rebuilds it). Exit codes: 0 answered or "
        f"refused, 1 an error (nothing materialised, a stale index, invented citations), 2 bad usage, "
        f"{EXIT_REFUSED} refused with --strict.")
    ask.add_argument("question")
    ask.add_argument("--model", help="registry key (default: the best configuration of the latest metrics)")
    ask.add_argument("--strategy", help="chunking strategy (default: as --model)")
    ask.add_argument("--retriever", choices=("dense", "ann", "late_interaction"), help="retriever (default: as --model)")
    ask.add_argument("--cut", type=float, help="distance cut (default: the configuration's suggested cut)")
    ask.add_argument("--k", type=int, default=4, help="most chunks kept (default 4)")
    ask.add_argument("--budget", type=int, default=1000, help="most tokens of sources, the model's tokenizer (1000)")
    ask.add_argument("--format", choices=("text", "json"), default="text")
    ask.add_argument("--verify", metavar="FILE", help="an answer text whose [n] citations are checked against the sources")
    ask.add_argument("--strict", action="store_true", help=f"exit {EXIT_REFUSED} when refused (for scripts)")

    export = commands.add_parser("export", help="write stored runs as TREC run files with their qrels")
    export.add_argument("folder", help="where to write <model>__<strategy>__<retriever>.run and .qrels")
    export.add_argument("--format", choices=("trec",), default="trec")
    export.add_argument("--model")
    export.add_argument("--strategy")
    export.add_argument("--retriever")

    ui = commands.add_parser("ui", help="open the Dagster UI on the project (dagster dev)")
    ui.add_argument("--port", type=int, default=3000)
    ui.add_argument("--host", default="127.0.0.1")
    return parser


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace, home: Path) -> int:
    if args.command == "evaluate":
        return _evaluate(args, home)
    if args.command == "backfill":
        return _backfill(args, home)
    if args.command == "report":
        return _report(home, [c.strip() for c in args.by.split(",") if c.strip()], args.format, args.paired)
    if args.command == "export":
        return _export(args, home)
    if args.command == "ask":
        return _ask(args, home)
    if args.command == "history":
        return _history(home, args.model, args.strategy, args.retriever)
    if args.command == "ui":
        return _ui(args, home)
    parser.print_help()
    return EXIT_OK


def _stop_on_sigterm() -> None:
    """SIGTERM stops a command as Ctrl-C does: the run in progress ends failed, its slot is released."""
    def interrupt(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


def main(argv: list[str] | None = None) -> int:
    """Every expected failure is one paragraph on stderr and an exit status (README: exit statuses);
    ``--debug`` (or RAG_ASSETS_DEBUG=1) shows Dagster's log and the traceback instead."""
    from rag_assets.run_failures import DEBUG_ENV_VAR, RunFailed, RunInterrupted, debugging, error_sentence
    from rag_assets.runner import UsageError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.debug:
        os.environ[DEBUG_ENV_VAR] = "1"
    _stop_on_sigterm()
    command = f"rag-assets {args.command or ''}".rstrip()
    try:
        return _dispatch(parser, args, paths.storage_home())
    except UsageError as error:  # nothing ran: one line and the usage exit status, as argparse does
        print(f"{command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (KeyboardInterrupt, RunInterrupted):
        if debugging():
            raise
        print(f"{command}: interrupted. The run in progress was recorded as failed and released what it held; "
              "nothing it had not finished became the current result. Run the command again to go on.",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except RunFailed as error:
        if debugging():
            raise
        print(f"{command}: {error}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:  # noqa: BLE001 - every other failure is told in one paragraph too
        if debugging():
            raise
        print(f"{command}: {error_sentence(type(error).__name__, str(error))}. Run with --debug (or "
              f"{DEBUG_ENV_VAR}=1) for the traceback.", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
