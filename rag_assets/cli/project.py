"""``rag-assets init``: the project file a team writes once.

``rag-assets.toml`` (not a table in ``pyproject.toml``: a documentation folder is seldom a Python project,
and a file of its own is found the same way from any folder below it) names the corpus, the evaluation
set, the out-of-domain questions, the models and strategies to run, the storage folder and the schedule.
The command line, the UI and the daemon read it (``rag_assets.settings.project_file``); an environment
variable still overrides a value.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rag_assets.cli.exit_codes import EXIT_FAILED, EXIT_OK
from rag_assets.settings import PROJECT_FILE

HEADER = ("rag-assets project: read by `rag-assets` (any command, from this folder or below), `rag-assets ui` and "
          "its\ndaemon. An environment variable (RAG_ASSETS_CORPUS, ...) overrides a value; relative paths are "
          "relative\nto this file. Every setting and its table: docs/settings.md.")


# a sweep of chunk size and overlap, or the team's own splitter, is a strategies file the user adds: not offered by
# default, since each point of a sweep chunks and embeds the corpus once more (BENCHMARKS.md, "Chunk size,
# overlap and the splitter": 16 points took 352 s on the default corpus with one model)
SWEEP_HINT = ('strategies_file = "strategies.toml"  # chunk size and overlap swept, or your own LangChain or\n'
              "LlamaIndex splitter beside ours (docs/chunking.md); then strategies = [] runs every one")


def project_toml(corpus: str) -> str:
    """The project file for ``corpus``, written by a TOML library: any folder name is a valid string."""
    import tomlkit

    document = tomlkit.document()
    for line in HEADER.splitlines():
        document.add(tomlkit.comment(line))
    document.add(tomlkit.nl())
    for key, value, comment in (
            ("corpus", corpus, "the documents: every file under it"),
            ("eval_set", "needles.jsonl", "needle questions: `rag-assets needles suggest` drafts them from the corpus"),
            ("out_of_domain", "", 'questions the corpus cannot answer ("" : no refusal calibration)'),
            ("home", ".rag-assets", "where every output goes"),
            ("models", ["all-MiniLM-L6-v2"], "what `evaluate` runs ([]: every registered model)"),
            ("strategies", ["boundaries_header", "boundaries"], None)):
        item = tomlkit.item(value)
        if comment:
            item.comment(comment)
        document.add(key, item)
    for line in SWEEP_HINT.splitlines():
        document.add(tomlkit.comment(line))
    document.add(tomlkit.nl())
    schedule = tomlkit.table()
    cron = tomlkit.item("0 2 * * *")
    cron.comment("the nightly evaluation (the daemon of `rag-assets ui`)")
    schedule.add("cron", cron)
    document.add("schedule", schedule)
    return tomlkit.dumps(document)


def init_command(args: argparse.Namespace, home: Path) -> int:
    folder = Path(args.folder).resolve()
    path = folder / PROJECT_FILE
    if path.exists():
        print(f"rag-assets init: {path} already exists; nothing was written (edit it, or remove it first)",
              file=sys.stderr)
        return EXIT_FAILED
    corpus = args.corpus or ("docs" if (folder / "docs").is_dir() else ".")
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(project_toml(corpus), encoding="utf-8")
    print(f"wrote {path}: corpus {folder / corpus}.{tree_note(folder / corpus)} Next: `rag-assets needles suggest "
          "needles.jsonl` drafts needles to complete, then `rag-assets evaluate` from this folder.")
    return EXIT_OK


def tree_note(corpus: Path) -> str:
    """The documentation tree's configuration the corpus is read with, when it lies above the corpus folder (an
    ``mkdocs.yml`` beside ``docs/``): it stays in reach, read with the corpus and never indexed."""
    from rag_assets.lib.ingest.doc_sources import tree_above

    tree = tree_above(corpus) if corpus.is_dir() else None
    if tree is None:
        return ""
    return (f" Its pages are read with the {tree.tool} configuration {tree.config} beside it (read, never "
            "indexed).")
