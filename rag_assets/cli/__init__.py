"""rag-assets: a thin command line over the graph and its stored results.

``main`` parses the command line (every default is a setting of ``rag_assets.settings``) and calls
the command's function, imported only when it runs (``COMMANDS``): ``ask`` does not pay for
Dagster's import. Every expected failure is one paragraph on stderr and an exit status
(``exit_codes``).
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import math
import os
import signal
import sys
import threading
from pathlib import Path

from rag_assets import __version__
from rag_assets import settings as settings_module
from rag_assets.cli.exit_codes import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_NO_RESULTS,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
)
from rag_assets.environment import is_a_command, set_debug, started_as_command
from rag_assets.runner.interrupts import pending as interrupt_pending
from rag_assets.runner.interrupts import watch as watch_interrupts
from rag_assets.settings import Settings, SettingsError, current

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_NO_RESULTS", "EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE",
           "build_parser", "main"]

# command -> "module:function" under rag_assets.cli, each function (args, home) -> exit status
COMMANDS = {
    "init": "project:init_command",
    "needles": "needles:needles_command",
    "evaluate": "runs:evaluate_command",
    "gate": "gate:gate_command",
    "backfill": "runs:backfill_command",
    "ui": "runs:ui_command",
    "report": "results:report_command",
    "history": "results:history_command",
    "export": "results:export_command",
    "ask": "ask:ask_command",
}


class OneLineParser(argparse.ArgumentParser):
    """Bad usage is one line on stderr and exit 2: the error and where to read the usage."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def setting(path: str):
    """An argparse type: a value held to the declared type and range of the setting at ``path``."""
    def parse(text: str):
        try:
            return settings_module.parse(path, text)
        except SettingsError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    parse.__name__ = path  # argparse names the type in its message
    return parse


def number_type(kind: type, accepts, refused: str, not_a: str = "number"):
    """An argparse type: ``kind`` of the text, refused (``<text> <refused>``) unless ``accepts`` it."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {not_a}") from None
        if not accepts(value):
            raise argparse.ArgumentTypeError(f"{text} {refused}")
        return value
    return parse


port = number_type(int, lambda v: 1 <= v <= 65535, "is not a port: a port is 1 to 65535", "port number")
positive_int = number_type(int, lambda v: v > 0, "must be at least 1", "whole number")
distance_cut = number_type(float, lambda v: math.isfinite(v) and 0 <= v <= 2,
                           "is not a cosine distance (a number from 0 to 2)")
similarity_limit = number_type(float, lambda v: math.isfinite(v) and 0 < v <= 1,
                               "is not a similarity limit (a number above 0, at most 1)")


def gated_retriever(text: str) -> str:
    """An argparse type: a retriever ``ask`` can gate, by its own distance or by that of the retriever it
    builds on (the retriever registry says which; read only when the option is given, so that the command
    line starts without loading the retrievers)."""
    from rag_assets.lib.retrieve.engine import gate_of

    try:
        gate_of(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def build_parser(defaults: Settings) -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="rag-assets",
        description="Measure a RAG retriever: corpus -> chunks -> embeddings -> retrieval -> metrics. "
        f"Outputs go to $RAG_ASSETS_HOME (now {defaults.home}).",
    )
    parser.add_argument("--version", action="version", version=f"rag-assets {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on failure, Dagster's log and the Python traceback (also RAG_ASSETS_DEBUG=1)")
    commands = parser.add_subparsers(dest="command")

    def inputs(command: argparse.ArgumentParser, told: str = "") -> None:
        command.add_argument("--corpus", default=defaults.corpus, help=told or "folder of documents")
        command.add_argument("--eval-set", default=defaults.eval_set, help=told or
                             "needle questions (JSON Lines), or a BEIR folder with queries.jsonl and qrels/")
        command.add_argument("--out-of-domain", default=defaults.out_of_domain, help=told or
                             "queries the corpus cannot answer (JSON Lines); '' for none")

    init = commands.add_parser("init", help="write a project file (rag-assets.toml) that the command line, the UI "
                               "and the daemon read")
    init.add_argument("folder", nargs="?", default=".", help="where the project is (default: here)")
    init.add_argument("--corpus", help="the documents, relative to the folder (default: docs/ if it exists, else .)")

    needles = commands.add_parser("needles", help="suggest needles from the corpus, check a needle file, or repair it")
    which = needles.add_subparsers(dest="needles_command", required=True)
    suggest = which.add_parser("suggest", help="propose needle candidates (prose sentences that occur once and "
                               "whose meaning no other sentence states), with empty questions to write")
    suggest.add_argument("out", help="the JSON Lines file to write")
    suggest.add_argument("--corpus", default=defaults.corpus, help="folder of documents (default: the project's)")
    suggest.add_argument("--per-document", type=positive_int, default=3)
    suggest.add_argument("--total", type=positive_int, default=50)
    suggest.add_argument("--max-similarity", type=similarity_limit, default=0.85,
                         help="a candidate whose cosine to another sentence is this or more is left out")
    suggest.add_argument("--no-meaning-check", action="store_true", help="skip the embedding of every sentence")
    suggest.add_argument("--force", action="store_true", help="replace the file if it exists")
    check = which.add_parser("check", help="every check the evaluation runs, by line, plus phrasing and coverage")
    check.add_argument("file")
    check.add_argument("--corpus", default=defaults.corpus, help="folder of documents (default: the project's)")
    check.add_argument("--max-shared-words", type=positive_int, default=5,
                       help="a question sharing more consecutive words with its needle is flagged")

    repair = which.add_parser("repair", help="after the corpus changed: each needle it lost with its successor, "
                              "accepted, rejected or replaced by a person (or a choices file), into a new needle file")
    repair.add_argument("file", nargs="?", default=defaults.eval_set, help="the needle file (default: the project's)")
    repair.add_argument("--corpus", default=defaults.corpus, help="folder of documents (default: the project's)")
    repair.add_argument("--out", help="the new needle file (default <file stem>.repaired.jsonl beside it)")
    repair.add_argument("--choices", help='a JSON Lines file of decisions: {"id": ..., "choice": "accept"|"reject"|'
                        '"drop"} or {"id": ..., "needle": "another sentence", "doc_id": ...}')
    repair.add_argument("--force", action="store_true", help="replace --out if it exists")
    label = which.add_parser("label", help="turn real questions into needles: pooled candidate sentences from every "
                             "configuration, picked with one key (or from a choices file)")
    label.add_argument("questions", help="a text file (one question a line), a .csv or .jsonl file (--field), a "
                       "traces.duckdb, or a postgresql:// URL (--query)")
    label.add_argument("--out", default="needles.labelled.jsonl", help="the needle file to write (default "
                       "needles.labelled.jsonl; the session is kept beside it as <out>.session.json)")
    label.add_argument("--out-of-domain", help="the out-of-domain file (default <out stem>.out_of_domain.jsonl)")
    label.add_argument("--field", default="question", help="the question's column (CSV) or key (JSON Lines)")
    label.add_argument("--query", default="", help="for a PostgreSQL source: the query, its first column the question")
    label.add_argument("--choices", help="a JSON Lines file of decisions, applied without a person")
    label.add_argument("--labeller", default="", help="who labels (kept with each decision)")
    label.add_argument("--corpus", default=defaults.corpus, help="folder of documents (default: the project's)")
    label.add_argument("--depth", type=positive_int, default=10, help="chunks pooled from each configuration")
    label.add_argument("--without-external", action="store_true",
                       help="leave the external retrievers of the evaluation out of the pool (each is asked every "
                       "question once otherwise: a service that costs per query)")
    agree = which.add_parser("agree", help="two labellers' sessions: Cohen's kappa and the disagreements")
    agree.add_argument("first", help="a session file (<out>.session.json)")
    agree.add_argument("second")
    agree.add_argument("--format", choices=("text", "json"), default="text")

    diagnose = which.add_parser("diagnose", help="the traces of `ask` read back: for each traced question with a "
                                "needle, whether retrieval, the context budget or the answer failed")
    diagnose.add_argument("--traces", help="a traces.duckdb (default: the storage folder's), or the team's PostgreSQL "
                          "(a postgresql:// URL, with --query and --chunks-query)")
    diagnose.add_argument("--query", default="", help="for PostgreSQL: the trace rows, with columns question, "
                          "retrieved (chunk ids, best first) and optionally cited (ids) and asked_at")
    diagnose.add_argument("--chunks-query", default="", help="for PostgreSQL: the team's chunks, with columns id "
                          "and text")
    diagnose.add_argument("--eval-set", default=defaults.eval_set, help="the needle file (default: the project's)")
    diagnose.add_argument("--format", choices=("table", "json"), default="table")

    evaluate = commands.add_parser("evaluate", help="materialise the whole graph and print the comparison")
    inputs(evaluate)
    evaluate.add_argument("--rebuild", action="store_true",
                          help="run every partition again, even those already up to date (to re-measure latency, say)")
    evaluate.add_argument("--beir-split", default=defaults.beir_split, help="qrels split of a BEIR evaluation set")
    evaluate.add_argument("--models", nargs="+", default=defaults.models or None,
                          help="embedding models (default: the project's `models`, else all registered)")
    evaluate.add_argument("--strategies", nargs="+", default=defaults.strategies or None,
                          help="chunking strategies (default: the project's `strategies`, else all registered)")
    evaluate.add_argument("--top-k", type=setting("evaluation.top_k"), default=defaults.evaluation.top_k,
                          help=f"chunks kept per query and retriever (default {defaults.evaluation.top_k})")
    evaluate.add_argument("--bm25-k1", type=setting("bm25.k1"), default=defaults.bm25.k1, help=f"BM25 k1 (default {defaults.bm25.k1})")
    evaluate.add_argument("--bm25-b", type=setting("bm25.b"), default=defaults.bm25.b, help=f"BM25 b (default {defaults.bm25.b})")
    evaluate.add_argument("--bm25-stopwords", choices=("none", "english"), default=defaults.bm25.stopwords,
                          help="drop English stop words (Lucene's set) in BM25")
    evaluate.add_argument("--bm25-stemmer", type=setting("bm25.stemmer"), default=defaults.bm25.stemmer,
                          help=f"Snowball stemmer for BM25 ('english'; default {defaults.bm25.stemmer})")

    gate = commands.add_parser("gate", help="a pull request's verdict: the docs evaluated against a baseline run "
                               "(exit 1 when the pick drops at the budget or changes)")
    inputs(gate)
    gate.add_argument("--baseline", required=True, help="the baseline: a storage folder (its newest run; a copy of "
                      "the main branch's), or a run id of this one")
    gate.add_argument("--summary", help="the Markdown summary to write (default <home>/gate/summary.md)")
    gate.add_argument("--junit", help="the JUnit XML to write (default <home>/gate/junit.xml)")

    backfill = commands.add_parser(
        "backfill", help="rebuild one model's embeddings, retrieval and metrics (after its weights changed)")
    backfill.add_argument("--model", required=True, help="registry key of the model")
    inputs(backfill, "as given to evaluate")
    backfill.add_argument("--strategies", nargs="+", help="chunking strategies (default: all registered)")

    report = commands.add_parser("report", help="print the comparison table from DuckDB")
    report.add_argument("--by", default="model,strategy,retriever", help="columns to group by, comma-separated")
    report.add_argument("--format", choices=("table", "json"), default="table")
    report.add_argument("--paired", action="store_true", help="also print the paired tests (table: comparisons)")

    history = commands.add_parser("history", help="recall@20, MRR and success at each context budget of one "
                                  "configuration in every evaluation run, with intervals over needles")
    history.add_argument("--model", help="registry key (default: the verdict's pick, or the best ranked "
                         "configuration within what is given)")
    history.add_argument("--strategy", help="chunking strategy (default: as --model)")
    history.add_argument("--retriever", help="retriever (default: as --model)")

    ask = commands.add_parser(
        "ask", help="retrieve for a question: NO ANSWER, or numbered sources and the prompt it would send",
        description="Answers from the latest materialised index (never rebuilds it). Exit codes: 0 answered or "
        f"refused, 1 an error (nothing materialised, a stale index, invented citations), 2 bad usage, "
        f"{EXIT_REFUSED} refused with --strict.")
    ask.add_argument("question", help="the question; '-' reads one question per line of standard input and "
                     "keeps the index loaded between them")
    ask.add_argument("--model", help="registry key (default: the verdict's pick in the latest metrics)")
    ask.add_argument("--strategy", help="chunking strategy (default: as --model)")
    ask.add_argument("--retriever", type=gated_retriever,
                     help="a retriever with a distance, or one built on one (hybrid: gated on dense's); default: "
                     "as --model")
    ask.add_argument("--cut", type=distance_cut,
                     help="cosine distance cut, 0 to 2 (default: the configuration's suggested cut)")
    ask.add_argument("--k", type=setting("evaluation.top_k"), default=25, help="most chunks considered (default 25)")
    ask.add_argument("--budget", type=setting("decision.budget"),
                     help="context tokens of whole sources, cl100k_base (default: the verdict's budget, else 1024)")
    ask.add_argument("--format", choices=("text", "json"), default="text")
    ask.add_argument("--verify", metavar="FILE", help="an answer text whose [n] citations are checked against the sources")
    ask.add_argument("--strict", action="store_true", help=f"exit {EXIT_REFUSED} when refused (for scripts)")

    export = commands.add_parser("export", help="write stored runs as TREC run files with their qrels")
    export.add_argument("folder", help="where to write <model>__<strategy>__<retriever>.run and .qrels")
    export.add_argument("--format", choices=("trec",), default="trec")
    export.add_argument("--model")
    export.add_argument("--strategy")
    export.add_argument("--retriever")
    export.add_argument("--force", action="store_true", help="replace run and qrels files already in the folder")

    ui = commands.add_parser("ui", help="open the Dagster UI on the project (dagster dev)")
    ui.add_argument("--port", type=port, default=3000)
    ui.add_argument("--host", default="127.0.0.1")
    return parser


def honour_interrupts() -> None:
    """Ctrl-C and SIGTERM stop a command, and no interrupt is lost.

    Ctrl-C (SIGINT) stops a command however it was started: a process started with it ignored (from a
    background shell) takes it again.

    SIGTERM stops a command as Ctrl-C does: the run in progress ends failed, its slot is released (a
    second SIGTERM ends the process at once). An interrupt that Python raises while it runs a finalizer
    or a weakref callback (SQLAlchemy's, inside Dagster's storage) is only printed there, "Exception
    ignored in ...", and the run would go on to record its results; it is delivered again instead, a
    moment later (from a timer thread, once the finalizer has returned), so it lands in the code that was
    running. Once an interrupt arrived, any other "Exception ignored" (a database connection closed in the
    middle of a query as the run was torn down) is its consequence, and is not printed."""
    def interrupt(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
        raise KeyboardInterrupt(f"signal {signum}")

    def deliver_again(unraisable) -> None:
        if is_interrupt(unraisable.exc_value):
            if _EXIT["status"] is None:  # once the command has decided how it ends, it is not stopped again
                again = threading.Timer(0.05, redeliver_interrupt)
                again.daemon = True
                again.start()
            return
        if interrupt_pending():  # a connection closed mid-query as Ctrl-C tore the run down: its consequence
            return
        print_unraisable(unraisable)

    def not_after_an_interrupt(record) -> bool:  # SQLAlchemy logs "Exception closing connection" with a traceback
        error = record.exc_info[1] if record.exc_info else None
        return not (record.name.startswith("sqlalchemy.pool") and (is_interrupt(error) or interrupt_pending()))

    print_unraisable = sys.unraisablehook
    if logging.lastResort is not None:  # where a library's records go when nobody configured logging
        logging.lastResort.addFilter(not_after_an_interrupt)
    for pool in SQLALCHEMY_POOLS:  # and where they go once a library has configured it (a filter on the logger
        logging.getLogger(f"sqlalchemy.pool.impl.{pool}").addFilter(not_after_an_interrupt)  # the pool logs on)
    watch_interrupts()  # one that Dagster takes while it ends a run, and forgets, is still seen
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
        signal.signal(signal.SIGINT, signal.default_int_handler)  # started with Ctrl-C ignored (in the background)
    signal.signal(signal.SIGTERM, interrupt)
    sys.unraisablehook = deliver_again


_EXIT: dict[str, int | None] = {"status": None}
# the pools SQLAlchemy logs "Exception closing connection" on, each on a logger named for its class
SQLALCHEMY_POOLS = ("NullPool", "QueuePool", "SingletonThreadPool", "StaticPool", "AssertionPool",
                    "AsyncAdaptedQueuePool", "FallbackAsyncAdaptedQueuePool")


_SETTLING = threading.Lock()  # a re-delivery and the command's decision never cross


def redeliver_interrupt() -> None:
    """The interrupt a finalizer swallowed, raised again in the code that runs now; not once the command has
    decided its exit status (``settle``): it would turn an exit 130 already said into death by SIGINT."""
    with _SETTLING:
        if _EXIT["status"] is None:
            os.kill(os.getpid(), signal.SIGINT)


def settle(status: int) -> int:
    """The command has decided how it ends: an interrupt re-delivery still pending is dropped, and in a
    ``rag-assets`` process any interrupt from now on (a re-delivery already on its way, or a second Ctrl-C)
    ends it at once with the status it decided, instead of a KeyboardInterrupt in its shutdown (exit -2)."""
    with _SETTLING:
        _EXIT["status"] = status
        if is_a_command() and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, end_as_decided)
            signal.signal(signal.SIGTERM, end_as_decided)
    return status


def end_as_decided(signum, frame) -> None:
    """An interrupt after the command decided its exit status (and said it): the process ends with it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said anyway
            pass
    os._exit(EXIT_FAILED if _EXIT["status"] is None else _EXIT["status"])


def interrupted(command: str) -> int:
    """The one line of a command that Ctrl-C or SIGTERM stopped, and its exit status."""
    settle(EXIT_INTERRUPTED)
    print(f"{command}: interrupted. The run in progress was recorded as failed and released what it held; "
          "nothing it had not finished became the current result. Run the command again to go on.",
          file=sys.stderr)
    return EXIT_INTERRUPTED


def is_interrupt(error: BaseException | None) -> bool:
    """Ctrl-C or SIGTERM, as Python raises it or as Dagster raises it inside a step."""
    return isinstance(error, KeyboardInterrupt) or type(error).__name__ == "DagsterExecutionInterruptedError"


RUN_THE_GRAPH = ("evaluate", "backfill", "ui")  # the commands that open the Dagster instance and embed


def say_the_project(args: argparse.Namespace, settings: Settings) -> None:
    """Which project file the settings came from (found from this folder up, or named by RAG_ASSETS_PROJECT),
    and, for a command that writes into its history, a corpus that lies outside that project's folder."""
    found = settings_module.project_file()
    if found is None or not found.is_file():
        return
    print(f"rag-assets {args.command}: project file {found}", file=sys.stderr)
    corpus = getattr(args, "corpus", None)
    if args.command in RUN_THE_GRAPH[:2] and corpus and not Path(corpus).resolve().is_relative_to(found.parent):
        print(f"rag-assets {args.command}: the corpus {Path(corpus).resolve()} lies outside this project's folder "
              f"{found.parent}; its evaluation is written into the project's storage folder {settings.home} "
              f"(run from the corpus's own project, or set RAG_ASSETS_PROJECT, to keep them apart)", file=sys.stderr)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from rag_assets.runner.services import check as check_services

    if args.command != "init":
        say_the_project(args, settings)

    check_services(settings, runs_the_graph=args.command in RUN_THE_GRAPH)  # before anything is written
    from rag_assets.lib.store.object_store import use_object_store

    use_object_store(settings.home, settings.object_store.url, settings.object_store.options)
    module, function = COMMANDS[args.command].split(":")
    return getattr(importlib.import_module(f"rag_assets.cli.{module}"), function)(args, settings.home)


def main(argv: list[str] | None = None) -> int:
    """Every expected failure is one paragraph on stderr and an exit status (see ``run_command``)."""
    _EXIT["status"] = None
    try:
        return settle(run_command(argv))
    except KeyboardInterrupt:  # a second interrupt after the command had said how it ends (its one line)
        if _EXIT["status"] is None:  # or one that landed as the command was deciding: its one line here
            from rag_assets.runner.failures import debugging

            if debugging():
                raise
            return interrupted("rag-assets")
        return _EXIT["status"]
    finally:
        settle(EXIT_FAILED if _EXIT["status"] is None else _EXIT["status"])


def run_command(argv: list[str] | None = None) -> int:
    """Every expected failure is one paragraph on stderr and an exit status (README: exit statuses);
    ``--debug`` (or RAG_ASSETS_DEBUG=1) shows Dagster's log and the traceback instead."""
    try:
        settings = current()
    except SettingsError as error:  # nothing ran: the setting at fault, in one line
        print(f"rag-assets: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser(settings)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    if args.debug:
        set_debug()
    if argv is None:  # the command line itself, not a caller in this process (a test) passing its arguments
        started_as_command()
    honour_interrupts()
    from rag_assets.runner.failures import (
        DEBUG_ENV_VAR,
        InterruptedAfterRun,
        RunFailed,
        RunInterrupted,
        UsageError,
        debugging,
        error_sentence,
    )

    if argv is None and not debugging():  # Dagster's report of a log it could not write to its damaged database
        from rag_assets.instance.storage_errors import WithoutLogWriteFailures  # is said once, as the run's error

        sys.stderr = WithoutLogWriteFailures(sys.stderr)
    command = f"rag-assets {args.command}"
    try:
        return _run(args, settings)
    except UsageError as error:  # nothing ran: one line and the usage exit status, as argparse does
        print(f"{command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (KeyboardInterrupt, RunInterrupted) as error:
        if debugging():
            raise
        if isinstance(error, InterruptedAfterRun):
            settle(EXIT_INTERRUPTED)
            print(f"{command}: interrupted: {error}. Run the command again to go on.", file=sys.stderr)
            return EXIT_INTERRUPTED
        return interrupted(command)
    except RunFailed as error:
        if debugging():
            raise
        if interrupt_pending():  # the run failed because Ctrl-C or SIGTERM tore it down
            return interrupted(command)
        from rag_assets.instance.storage_errors import failed_step_sentence

        said = None if settings.instance.postgres_url else failed_step_sentence(str(error), settings.home / "dagster")
        if said:  # a step failed on Dagster's own damaged database: the file and the fix, not the statement
            print(f"{command}: {said}.", file=sys.stderr)
            return EXIT_FAILED
        print(f"{command}: {error}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:  # noqa: BLE001 - every other failure is told in one paragraph too
        if debugging():
            raise
        if interrupt_pending():  # an interrupt that a library turned into its own error (SQLite: "interrupted")
            return interrupted(command)
        from rag_assets.instance.storage_errors import instance_storage_sentence

        said = instance_storage_sentence(error, settings.home / "dagster", bool(settings.instance.postgres_url))
        if said:  # Dagster's own database: the file, the cause and the fix, not SQLAlchemy's statement
            print(f"{command}: {said}.", file=sys.stderr)
            return EXIT_FAILED
        if isinstance(error, OSError) and error.errno == errno.ENOSPC and not error.filename:
            print(f"{command}: no space left on device writing under the storage folder {settings.home}. Free space "
                  "(or point RAG_ASSETS_HOME at a folder on a device with room) and run again.", file=sys.stderr)
            return EXIT_FAILED
        if getattr(error, "paragraph", False):  # an expected failure that says all there is to say
            print(f"{command}: {error}", file=sys.stderr)
            return EXIT_FAILED
        print(f"{command}: {error_sentence(type(error).__name__, str(error))}. Run with --debug (or "
              f"{DEBUG_ENV_VAR}=1) for the traceback.", file=sys.stderr)
        return EXIT_FAILED
