"""``rag-assets ask``: retrieve for a question from the latest materialised index, gate it, and print
NO ANSWER or numbered sources and the prompt it would send. Never rebuilds anything."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rag_assets.cli.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_REFUSED
from rag_assets.lib.store import paths
from rag_assets.lib.store.database import DamagedDatabase, read_only


def question_problem(question: str) -> None:
    """UsageError unless ``question`` is text a person asks: not empty, UTF-8, at most MAX_QUESTION_CHARS."""
    from rag_assets.lib.evalsets.queries import MAX_QUESTION_CHARS
    from rag_assets.runner.failures import UsageError

    if not question.strip():
        raise UsageError("the question is empty")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8 reach Python as lone surrogates
        raise UsageError("the question is not UTF-8 text") from None
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(f"the question is {len(question):,} characters long; at most {MAX_QUESTION_CHARS:,}")


MAX_ANSWER_BYTES = 1024 * 1024


def answer_text(path: str) -> str:
    """The answer text ``ask --verify`` checks: UsageError unless ``path`` is a UTF-8 file of at most
    MAX_ANSWER_BYTES (read no further than one byte past it)."""
    from rag_assets.runner.failures import UsageError

    try:
        with open(path, "rb") as file:
            data = file.read(MAX_ANSWER_BYTES + 1)
    except OSError as error:
        raise UsageError(f"--verify {path}: {error.strerror or error}") from None
    if len(data) > MAX_ANSWER_BYTES:
        raise UsageError(f"--verify {path}: larger than {MAX_ANSWER_BYTES:,} bytes; an answer to verify is text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"--verify {path}: not UTF-8 text (byte {error.start}); give the answer as a text "
                         "file") from None


def ask_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.lib.answer import ask as asking
    from rag_assets.lib.answer.choice import calibrated_cut, default_configuration
    from rag_assets.lib.answer.traces import record_trace
    from rag_assets.lib.embed.models import load_for_asking, registry
    from rag_assets.lib.embed.spec import ModelUnavailableError
    from rag_assets.settings import current

    interactive = args.question == "-"
    if not interactive:
        question_problem(args.question)  # bad usage: exit 2 before anything is loaded
    answered = answer_text(args.verify) if args.verify else None
    database = paths.stored_database(home)
    try:
        needs_metrics = not (args.model and args.strategy and args.retriever and args.cut is not None)
        if needs_metrics and not database.exists():
            raise asking.AskError(f"no results yet at {database}: run `rag-assets evaluate` first, or give "
                                  "--model, --strategy, --retriever and --cut")
        model, strategy, retriever, cut = args.model, args.strategy, args.retriever, args.cut
        budget, why = args.budget or asking.DEFAULT_BUDGET, "as given"
        if needs_metrics:
            with read_only(database) as connection:
                chosen = default_configuration(connection, model, strategy, retriever)
                model, strategy, retriever, why = chosen.model, chosen.strategy, chosen.retriever, chosen.why
                budget = args.budget or chosen.budget
                cut = cut if cut is not None else calibrated_cut(connection, model, strategy, retriever)
        paths.keep_scratch_in(home)  # onnxruntime's and PyTorch's files in the storage folder, not the user's
        embedder = load_for_asking(model, registry(current().models_file), paths.onnx_dir(home))
        ask_index = asking.load_index(home, embedder, strategy)
        if interactive:  # the index stays loaded: one answer per line of standard input
            return ask_each_line(ask_index, home, retriever, cut, budget, why, args)
        answer = asking.ask(ask_index, args.question, retriever, cut, args.k, budget, why)
        cited = asking.verify_citations(answered, answer.sources) if answered is not None else None
    except (asking.AskError, asking.CitationError, ModelUnavailableError, DamagedDatabase, OSError) as error:
        print(f"rag-assets ask: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(answer.to_json() if args.format == "json" else answer.text(), flush=True)  # the answer first
    if cited is not None:
        print(f"\ncitations verified: {', '.join(f'[{n}]' for n in cited) or 'none'}", file=sys.stderr)
    warn(asking.keep_token_vectors(ask_index), record_trace(home, answer, cited), published_trace(home))
    return EXIT_REFUSED if answer.refused and args.strict else EXIT_OK


def published_trace(home: Path) -> str | None:
    """The traces ``traces.duckdb`` holds that the team's database (``publish.url``) does not yet, written there
    (table ``<prefix>ask_traces``); a warning when it cannot take them (the next ask writes them)."""
    import socket

    from rag_assets.environment import inherited
    from rag_assets.lib.answer.traces import traces_path
    from rag_assets.lib.store.publishing import PublishError, publish_traces
    from rag_assets.lib.store.team_database import TeamDatabaseError, variables_of, with_variables
    from rag_assets.settings import current

    settings = current().publish
    if not settings.url or not traces_path(home).exists():
        return None
    try:
        publish_traces(traces_path(home), with_variables(settings.url, inherited(variables_of(settings.url))),
                       f"{socket.gethostname()}:{home}", settings.table_prefix)
    except (PublishError, TeamDatabaseError) as error:
        return f"{error}; the trace is in {traces_path(home)}, and the next ask writes it there"
    return None


def warn(*warnings: str | None) -> None:
    """What could not be kept (token vectors, a trace), one line each; never a lost answer."""
    for warning in warnings:
        if warning:
            print(f"rag-assets ask: warning: {warning}", file=sys.stderr)


def ask_each_line(ask_index, home: Path, retriever: str, cut: float, budget: int, why: str,
                  args: argparse.Namespace) -> int:
    """``rag-assets ask -``: a question per line of standard input, answered by the index loaded once
    (blank lines skipped; a line that is not a question is one error line, and the next is asked)."""
    from rag_assets.lib.answer import ask as asking
    from rag_assets.lib.answer.traces import record_trace
    from rag_assets.runner.failures import UsageError

    refused = False
    for number, line in enumerate(sys.stdin, start=1):
        question = line.rstrip("\n")
        if not question.strip():
            continue
        try:
            question_problem(question)
        except UsageError as error:
            print(f"rag-assets ask: line {number}: {error}", file=sys.stderr)
            continue
        answer = asking.ask(ask_index, question, retriever, cut, args.k, budget, why)
        refused = refused or answer.refused
        print(answer.to_json() if args.format == "json" else answer.text() + "\n", flush=True)
        warn(record_trace(home, answer), published_trace(home))
    warn(asking.keep_token_vectors(ask_index))
    return EXIT_REFUSED if refused and args.strict else EXIT_OK
