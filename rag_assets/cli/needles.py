"""``rag-assets needles suggest``, ``needles check`` and ``needles repair``: needles mined from the corpus, the
review of a needle file a person is writing (``rag_assets.lib.evalsets.mining``), and a needle file repaired after
the corpus changed (``rag_assets.lib.evalsets.repair``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rag_assets.cli.corpus_text import corpus_documents
from rag_assets.cli.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from rag_assets.lib.store import paths


def suggest_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.lib.embed.models import DEFAULT_MODEL, load_for_asking, registry
    from rag_assets.lib.evalsets.mining import (
        MAX_CHARACTERS,
        MAX_WORDS,
        MIN_CHARACTERS,
        MIN_CONTENT_WORDS,
        MIN_WORDS,
        candidates,
    )
    from rag_assets.settings import current

    out = Path(args.out)
    if out.exists() and not args.force:
        print(f"rag-assets needles suggest: {out} exists; nothing was written (--force replaces it)", file=sys.stderr)
        return EXIT_FAILED
    documents = corpus_documents(Path(args.corpus), home)
    embedder = None if args.no_meaning_check else load_for_asking(DEFAULT_MODEL, registry(current().models_file),
                                                                      paths.onnx_dir(home))
    mined = candidates(documents, args.per_document, args.total, embedder.embed if embedder else None,
                       args.max_similarity)
    phrasings = current().evaluation.phrasings
    with out.open("w", encoding="utf-8") as handle:
        for number, candidate in enumerate(mined.candidates, start=1):
            handle.write(json.dumps(candidate.row(number, phrasings), ensure_ascii=False) + "\n")
    print(f"{len(mined.candidates)} needle candidates from {len(documents)} documents written to {out} "
          f"({mined.sentences} prose sentences; left out: {mined.repeated} that occur more than once, "
          f"{mined.restated} whose meaning another sentence states). Write each candidate's "
          f"{' and '.join(map(repr, phrasings))} questions, drop the ones you would not ask, then "
          f"`rag-assets needles check {out}`.")
    if mined.without_prose:
        shown = ", ".join(mined.without_prose[:8]) + (" ..." if len(mined.without_prose) > 8 else "")
        print(f"No candidate from {len(mined.without_prose)} documents with text: no sentence there reads as prose "
              f"that could be a needle ({shown}). A candidate is a sentence ending in . ! ? (or 。！？) of "
              f"{MIN_WORDS} to {MAX_WORDS} words with {MIN_CONTENT_WORDS} content words, or {MIN_CHARACTERS} to "
              f"{MAX_CHARACTERS} characters in Japanese, Chinese or Thai, mostly letters; write needles for these "
              "documents by hand.")
    return EXIT_OK


def check_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.lib.evalsets.mining import review
    from rag_assets.lib.evalsets.queries import EvalSetError, json_lines, needle_of
    from rag_assets.settings import current

    try:
        records = list(json_lines(Path(args.file), "needle file"))
    except EvalSetError as error:
        print(f"rag-assets needles check: {error}", file=sys.stderr)
        return EXIT_USAGE
    unreadable = []  # every line the evaluation would refuse to read, each named with its field
    for where, record in records:
        try:
            needle_of(where, record)
        except EvalSetError as error:
            unreadable.append(str(error))
    if unreadable:
        for line in unreadable:
            print(f"rag-assets needles check: {line}", file=sys.stderr)
        return EXIT_USAGE
    if not records:  # the evaluation refuses a file without a needle: so does its check
        print(f"rag-assets needles check: needle file {args.file} holds no needle (the evaluation would refuse it); "
              "`rag-assets needles suggest` drafts some from the corpus", file=sys.stderr)
        return EXIT_FAILED
    documents = corpus_documents(Path(args.corpus), home)
    found = review(records, documents, current().evaluation.phrasings, args.max_shared_words)
    for line in found.problems + found.copied:
        print(line)
    if found.drafts:
        print(f"draft: {len(found.drafts)} of {found.needles} needles have no question yet (first: {found.drafts[0]})")
    print(f"coverage: {len(documents) - len(found.uncovered_documents)} of {len(documents)} documents have a needle"
          + (f"; without one: {', '.join(found.uncovered_documents[:8])}{' ...' if len(found.uncovered_documents) > 8 else ''}"
             if found.uncovered_documents else "") + f"; {found.uncovered_sections} sections without one")
    if found.problems:
        print(f"rag-assets needles check: {len(found.problems)} problems the evaluation would refuse", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def repair_command(args: argparse.Namespace, home: Path) -> int:
    """The needles the corpus lost, each with its successor, decided by a person (the terminal, or a choices file),
    written into a new version of the needle file; the file given is never changed."""
    from rag_assets.lib.evalsets.queries import EvalSetError, json_lines, needle_of
    from rag_assets.lib.evalsets.relocation import KEPT, Relocator
    from rag_assets.lib.evalsets.repair import ACCEPT, ANOTHER, DROP, REJECT, Decision, read_decisions, repaired
    from rag_assets.lib.ingest.corpus import scan_corpus, snapshot_id

    source = Path(args.file)
    out = Path(args.out) if args.out else source.with_name(source.stem + ".repaired" + source.suffix)
    if out.resolve() == source.resolve():
        print(f"rag-assets needles repair: --out {out} is the needle file itself: the repair is a new version for a "
              "person to accept, written beside it", file=sys.stderr)
        return EXIT_USAGE
    if out.exists() and not args.force:
        print(f"rag-assets needles repair: {out} exists; --force replaces it", file=sys.stderr)
        return EXIT_USAGE
    try:
        records = list(json_lines(source, "needle file"))
        needles = [needle_of(where, record) for where, record in records]
        decisions = read_decisions(Path(args.choices)) if args.choices else None
    except EvalSetError as error:
        print(f"rag-assets needles repair: {error}", file=sys.stderr)
        return EXIT_USAGE
    documents = corpus_documents(Path(args.corpus), home)
    relocator = Relocator({d: text for d, (text, _) in documents.items()},
                          {d: [s["heading"] for s in sections if s.get("heading")] for d, (_, sections) in documents.items()})
    relocations = [relocator.relocate(needle) for needle in needles]
    changed = [r for r in relocations if r.status != KEPT]
    if not changed:
        print(f"every needle of {source} is verbatim, once, in its own document: nothing to repair")
        return EXIT_OK
    if decisions is None:
        if not sys.stdin.isatty():
            print("rag-assets needles repair: no terminal to ask in: give the decisions with --choices FILE (JSON lines "
                  '{"id": ..., "choice": "accept"|"reject"|"drop"} or {"id": ..., "needle": "another sentence"})',
                  file=sys.stderr)
            return EXIT_USAGE
        decisions = {}
        for found in changed:
            if found.status == "moved":
                continue
            print(f"\n{found.needle_id} ({found.previous_doc_id}): {found.reason}\n  was: {found.needle}")
            if found.successor:
                print(f"  now: {found.successor}")
            keys = ("[a]ccept, " if found.successor else "") + "[r]eject (leave it), [d]rop, [p]ick another, [s]kip"
            while True:
                answer = input(f"  {keys}? ").strip().lower()[:1]
                if answer in ("a", "r", "d", "s", "p") and (answer != "a" or found.successor):
                    break
            if answer == "p":
                decisions[found.needle_id] = Decision(found.needle_id, ANOTHER, input("  the sentence: ").strip(),
                                                      input(f"  its document [{found.doc_id}]: ").strip())
            elif answer != "s":
                decisions[found.needle_id] = Decision(found.needle_id, {"a": ACCEPT, "r": REJECT, "d": DROP}[answer])
    snapshot = snapshot_id(scan_corpus(Path(args.corpus).resolve(), {}))
    try:
        repair = repaired([record for _, record in records], relocations, decisions, relocator, snapshot)
    except EvalSetError as error:
        print(f"rag-assets needles repair: {error}", file=sys.stderr)
        return EXIT_USAGE
    temporary = out.with_name(f".{out.name}.tmp")
    temporary.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in repair.records),
                         encoding="utf-8")
    temporary.replace(out)
    for line in repair.done + repair.undecided:
        print(line)
    print(f"wrote {out}: {len(repair.records)} needles, {len(repair.done)} changed, {len(repair.undecided)} left as "
          f"written (checked against snapshot {snapshot}). Check it (`rag-assets needles check {out}`), then put it "
          f"in place of {source.name} with a new version in its CHANGELOG.md: the evaluation set's version changes "
          "when you accept it")
    return EXIT_OK


def needles_command(args: argparse.Namespace, home: Path) -> int:
    from rag_assets.cli.labelling import agree_command, diagnose_command, label_command

    commands = {"suggest": suggest_command, "check": check_command, "label": label_command, "agree": agree_command,
                "diagnose": diagnose_command, "repair": repair_command}
    return commands[args.needles_command](args, home)
