"""The commands that run the graph or serve it: ``evaluate``, ``backfill`` and ``ui``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rag_assets.cli.exit_codes import EXIT_INTERRUPTED, EXIT_OK
from rag_assets.cli.results import CONFIGURATION, report
from rag_assets.environment import use_dagster_home
from rag_assets.lib.store import paths
from rag_assets.settings import PROJECT_ROOT, current, pass_project_file_on


def progress(line: str) -> None:
    print(f"rag-assets: {line}", flush=True)


def show_step_progress() -> None:
    """Long steps' reports (``rag_assets.progress``: texts embedded, with the time left) as progress lines,
    written to the terminal the command started with (Dagster captures a step's own output to its log)."""
    import logging

    from rag_assets.lib.formats.progress import LOGGER

    # a step's standard output is captured to its log file while it runs: write to the terminal itself
    terminal = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)

    class Printed(logging.Handler):
        def emit(self, record) -> None:
            terminal.write(f"rag-assets:   {record.getMessage()}\n")

    logger = logging.getLogger(LOGGER)
    if not any(isinstance(handler, Printed) for handler in logger.handlers):
        logger.addHandler(Printed())
        logger.setLevel(logging.INFO)
        logger.propagate = False


TOOLS = {"sphinx": "Sphinx", "mkdocs": "MkDocs", "docusaurus": "Docusaurus"}


def configuration_lines(extraction: dict) -> list[str]:
    """What the extraction says about the documentation trees: which configuration the documents were read
    with (one above the corpus folder shows as ../), the configuration files listed apart from documents, and
    autodoc's directives left without text."""
    lines = [f"read with the {TOOLS.get(tree['tool'], tree['tool'])} configuration {tree['configuration']}: "
             f"{tree['documents']} documents" for tree in extraction.get("trees") or [] if tree["tool"] != "none"]
    for tree in extraction.get("trees") or []:
        for name, why in (tree.get("skipped_extensions") or {}).items():
            lines.append(f"{tree['configuration']}: Markdown extension {name} not loaded: {why}")
    configuration = extraction.get("configuration_files") or {}
    if configuration:
        shown = ", ".join(f"{path} ({kind})" for path, kind in list(configuration.items())[:6])
        lines.append(f"configuration, not documents: {len(configuration)} file(s): {shown}"
                     + (", ..." if len(configuration) > 6 else ""))
    if extraction.get("documents_generated"):
        generated = extraction["documents_generated"]
        lines.append(f"{len(generated)} page(s) all generated from the documented code, nothing to index: "
                     + ", ".join(generated[:5]) + (", ..." if len(generated) > 5 else ""))
    if extraction.get("generated_from_code"):
        lines.append(f"{extraction['generated_from_code']} autodoc or mkdocstrings block(s) left without their "
                     "generated text: it comes from importing the documented package, which runs its code "
                     "(evaluation.run_tree_code allows it in a Sphinx tree)")
    return lines


def _print_inputs(outcome) -> None:
    """The corpus and evaluation set a run was built on, and the evaluation set's checks."""
    extraction, evaluation = outcome.extraction, outcome.eval_set
    progress(f"extracted_text: {extraction['documents']} documents ({extraction['documents_ok']} ok, "
             f"{extraction['documents_failed']} failed), {extraction['characters']} characters, "
             f"{extraction['sections']} sections")
    for doc_id, reason in extraction["failed"].items():
        progress(f"  failed: {doc_id}: {reason}")
    for line in configuration_lines(extraction):
        progress(f"  {line}")
    checks = ", ".join(f"{c.name} {c.verdict}" for c in outcome.checks if c.asset == "eval_set")
    progress(
        f"eval_set {evaluation['version']}: {evaluation['needles']} needles, {evaluation['needle_queries']} needle "
        f"queries, {evaluation['document_queries']} document queries, {evaluation['out_of_domain_queries']} "
        f"out-of-domain ({evaluation['out_of_domain_near']} near, {evaluation['out_of_domain_off_topic']} off-topic); "
        f"checks: {checks}")


def _inputs(args: argparse.Namespace, home: Path) -> dict:
    """The resource fields every command that runs the graph takes from its options."""
    return {"home": str(home), "corpus_dir": str(Path(args.corpus).resolve()),
            "eval_set": str(Path(args.eval_set).resolve()),
            "out_of_domain": str(Path(args.out_of_domain).resolve()) if args.out_of_domain else ""}


def evaluate_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.instance.dagster_yaml import default_instance
    from rag_assets.resources import BM25Settings, RagSettings
    from rag_assets.runner.evaluation import check_names, check_retrievers_file, materialize_all, strategies_of

    bm25 = BM25Settings(k1=args.bm25_k1, b=args.bm25_b, stopwords=args.bm25_stopwords, stemmer=args.bm25_stemmer)
    lost = getattr(args, "max_lost_needles", None)  # the gate's own evaluation: whatever the docs lost
    settings = RagSettings(**_inputs(args, home), beir_split=args.beir_split, bm25=bm25, top_k=args.top_k,
                           **({"max_lost_needles": lost} if lost is not None else {}))
    _, known = strategies_of(current(), None)  # a bad strategies file is one line before anything is created
    check_names(args.models or [], args.strategies or [], current().models_file, known)  # before the Dagster folder
    check_retrievers_file(current().retrievers_file)
    show_step_progress()
    outcome = materialize_all(settings, default_instance(home), model_keys=args.models, strategies=args.strategies,
                              progress=progress, rebuild=args.rebuild)
    _print_inputs(outcome)
    if outcome.up_to_date:
        progress(f"{len(outcome.up_to_date)} runs skipped as up to date (their inputs, settings and weights are those "
                 "they were built from; `evaluate --rebuild` runs them again)")
    return print_verdict(home)


def print_verdict(home: Path) -> int:
    """The verdict (at most about 30 lines); ``rag-assets report`` prints the full tables."""
    from rag_assets.lib.evaluate.verdict import verdict
    from rag_assets.lib.store.database import read_only

    with read_only(paths.stored_database(home)) as connection:
        print("\n" + verdict(connection, home))
    return 0


def backfill_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.instance.dagster_yaml import default_instance
    from rag_assets.resources import RagSettings
    from rag_assets.runner.evaluation import backfill_model, check_names, check_retrievers_file, strategies_of

    _, known = strategies_of(current(), None)  # a bad strategies file is one line before anything is created
    check_names([args.model], args.strategies or [], current().models_file, known)  # before the Dagster folder
    check_retrievers_file(current().retrievers_file)
    show_step_progress()
    backfill_model(RagSettings(**_inputs(args, home)), default_instance(home), args.model, strategies=args.strategies,
                   progress=progress)
    return report(home, CONFIGURATION, "table")


SUPERSEDED_WARNING = "Function `dev_command` is superseded"


def ui_command(args: argparse.Namespace, home: Path) -> int:
    """``dagster dev`` on the project's workspace, with the instance under the storage folder."""
    from rag_assets.instance.dagster_yaml import ensure_dagster_home

    use_dagster_home(ensure_dagster_home(home))
    pass_project_file_on()  # the code location and the daemon run from the package's folder
    workspace = PROJECT_ROOT / "workspace.yaml"
    # `dagster dev` warns that `dg dev` supersedes it. `dg dev` finds the project by its own layout and
    # starts `dagster dev` through uv in the project's environment; rag-assets needs this workspace.yaml, the
    # storage folder's instance and this interpreter, which is what it passes `dagster dev` itself. So the
    # warning is silenced, by its text alone.
    command = [sys.executable, "-W", f"ignore:{SUPERSEDED_WARNING}", "-m", "dagster", "dev", "-w", str(workspace),
               "-p", str(args.port), "-h", args.host]
    # `dagster dev` runs under this process, in a process group of its own (runner/supervision.py): Ctrl-C or
    # SIGTERM, to this process or to its whole group, is passed on once as the Ctrl-C Dagster shuts down on,
    # and what of the webserver, the daemon and the code servers still runs GRACE_SECONDS later is killed.
    # It starts with both signals at their defaults, even where a shell started this with Ctrl-C ignored.
    from rag_assets.runner.report_server import serve_report
    from rag_assets.runner.supervision import GRACE_SECONDS, supervise

    # the evaluation page over HTTP beside the UI (the metrics asset's `evaluation_page` link), stopped with it
    port = current().report_port
    try:
        report = serve_report(home / "report", port)
    except OSError as error:
        report = None
        print(f"rag-assets ui: the evaluation page cannot be served on 127.0.0.1:{port} ({error.strerror}); the UI "
              f"starts without it (set RAG_ASSETS_REPORT_PORT to a free port, or open {home / 'report' / 'index.html'})",
              file=sys.stderr)
    else:
        print(f"rag-assets ui: the evaluation page: {report.address}", file=sys.stderr)
    try:
        stopped = supervise(command, cwd=PROJECT_ROOT)
    finally:
        if report is not None:
            report.stop()
    if stopped.killed:
        print(f"rag-assets ui: the Dagster services had not stopped {GRACE_SECONDS:.0f} s after the interrupt: "
              "what was left of them was killed", file=sys.stderr)
    if stopped.interrupted:  # stopping it is how a session of the UI ends
        return EXIT_INTERRUPTED if stopped.killed else EXIT_OK
    return stopped.status
