"""``rag-assets ask``: retrieve for a question from the latest materialised index, gate it, and print
NO ANSWER or numbered sources and the prompt it would send. Never rebuilds anything."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rag_assets.cli.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_REFUSED
from rag_assets.lib.store import paths
from rag_assets.lib.store.database import DamagedDatabase, read_only


def ask_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.lib.answer import ask as asking
    from rag_assets.lib.answer.choice import calibrated_cut, default_configuration
    from rag_assets.lib.answer.traces import record_trace
    from rag_assets.lib.embed.models import load_model
    from rag_assets.lib.embed.spec import ModelUnavailableError

    database = paths.stored_database(home)
    try:
        needs_metrics = not (args.model and args.strategy and args.retriever and args.cut is not None)
        if needs_metrics and not database.exists():
            raise asking.AskError(f"no results yet at {database}: run `rag-assets evaluate` first, or give "
                                  "--model, --strategy, --retriever and --cut")
        model, strategy, retriever, cut = args.model, args.strategy, args.retriever, args.cut
        if needs_metrics:
            with read_only(database) as connection:
                model, strategy, retriever = default_configuration(connection, model, strategy, retriever)
                cut = cut if cut is not None else calibrated_cut(connection, model, strategy, retriever)
        embedder = load_model(model, onnx_dir=paths.onnx_dir(home))
        answer = asking.ask(asking.load_index(home, embedder, strategy), args.question, retriever, cut, args.k,
                            args.budget)
        cited = asking.verify_citations(Path(args.verify).read_text(encoding="utf-8"), answer.sources) \
            if args.verify else None
    except (asking.AskError, asking.CitationError, ModelUnavailableError, DamagedDatabase, OSError) as error:
        print(f"rag-assets ask: {error}", file=sys.stderr)
        return EXIT_FAILED
    record_trace(home, answer, cited)
    print(answer.to_json() if args.format == "json" else answer.text())
    if cited is not None:
        print(f"\ncitations verified: {', '.join(f'[{n}]' for n in cited) or 'none'}", file=sys.stderr)
    return EXIT_REFUSED if answer.refused and args.strict else EXIT_OK
