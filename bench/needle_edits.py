"""How well needles follow the edits writers make: every needle of a set edited five ways in its corpus, and what
the relocator (``lib/evalsets/relocation.py``) makes of each.

    python bench/needle_edits.py [--corpus FOLDER --needles FILE] [--json OUT]

The edits, each applied to every needle at once (a copy of the extracted text; nothing is written):

- ``typographic``: straight quotes and apostrophes made curly, a space made a no-break space (expected: kept);
- ``word``: the needle's longest word replaced by another (expected: edited, the new sentence its successor);
- ``clause``: ", in most cases," inserted after its middle word (expected: edited);
- ``moved``: cut from its page and appended to another page (expected: moved);
- ``deleted``: cut from its page (expected: removed, no successor).

A successor is correct when it is the edited sentence (folded). Precision: correct successors over all offered
(a successor offered for a deleted needle is wrong); recall: correct successors over the needles edited
(``word`` and ``clause``). Each threshold of similarity is read from one pass with the threshold at 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.cli.corpus_text import corpus_documents  # noqa: E402
from rag_assets.lib.evalsets import relocation  # noqa: E402
from rag_assets.lib.evalsets.queries import load_needles  # noqa: E402
from rag_assets.lib.ingest.folding import fold  # noqa: E402
from rag_assets.settings import DEFAULT_CORPUS_DIR, DEFAULT_EVAL_SET  # noqa: E402

EXPECTED = {"typographic": relocation.KEPT, "word": relocation.EDITED, "clause": relocation.EDITED,
            "moved": relocation.MOVED, "deleted": relocation.REMOVED}
THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
REPLACEMENT = "remarkable"


def typographic(sentence: str) -> str:
    curly = sentence.replace("'", "\u2019")
    quoted = curly.split('"')
    curly = "".join(part + ("\u201c" if i % 2 == 0 else "\u201d") for i, part in enumerate(quoted[:-1])) + quoted[-1]
    return curly.replace(" ", "\u00a0", 1)


def word(sentence: str) -> str:
    words = [w for w in sentence.split() if w.isalpha()]
    longest = max(words, key=len) if words else sentence.split()[0]
    return sentence.replace(longest, REPLACEMENT if longest != REPLACEMENT else "notable", 1)


def clause(sentence: str) -> str:
    words = sentence.split(" ")
    middle = max(1, len(words) // 2)
    return " ".join(words[:middle]) + ", in most cases, " + " ".join(words[middle:])


EDITS = {"typographic": typographic, "word": word, "clause": clause}


def edited_corpus(documents: dict[str, str], needles, edit: str) -> tuple[dict[str, str], dict[str, str]]:
    """The documents with every needle edited one way, and each needle's edited sentence (or where it moved)."""
    texts, after = dict(documents), {}
    order = sorted(texts)
    for needle in needles:
        text = texts[needle.doc_id]
        at = text.find(needle.needle)
        if at < 0:  # written with other whitespace than the text has: edit what the text holds
            continue
        if edit in EDITS:
            after[needle.id] = EDITS[edit](needle.needle)
            texts[needle.doc_id] = text[:at] + after[needle.id] + text[at + len(needle.needle):]
        else:
            texts[needle.doc_id] = text[:at] + text[at + len(needle.needle):]
            if edit == "moved":
                target = order[(order.index(needle.doc_id) + 1) % len(order)]
                texts[target] = texts[target] + "\n\n" + needle.needle + "\n"
                after[needle.id] = target
    return texts, after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS_DIR)
    parser.add_argument("--needles", type=Path, default=DEFAULT_EVAL_SET)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    extracted = corpus_documents(args.corpus, Path(tempfile.mkdtemp()))
    documents = {doc_id: text for doc_id, (text, _) in extracted.items()}
    headings = {doc_id: [s["heading"] for s in sections if s.get("heading")]
                for doc_id, (_, sections) in extracted.items()}
    needles = load_needles(args.needles)
    threshold_in_use = relocation.SUCCESSOR_SIMILARITY
    relocation.SUCCESSOR_SIMILARITY = 0.0  # every nearest sentence offered: the thresholds are applied below
    report = {"corpus": str(args.corpus), "needles": len(needles), "edits": {}}
    offered = []  # (edit, similarity, correct)
    for edit, expected in EXPECTED.items():
        texts, after = edited_corpus(documents, needles, edit)
        started = time.perf_counter()
        results = relocation.relocate([n for n in needles if n.id in after or edit == "deleted"], texts, headings)
        seconds = time.perf_counter() - started
        statuses = {}
        for result in results:  # as the threshold in use decides
            status = relocation.REMOVED if result.status == relocation.EDITED and \
                result.similarity < threshold_in_use else result.status
            statuses[status] = statuses.get(status, 0) + 1
            if result.successor is not None:
                correct = edit in ("word", "clause") and fold(after[result.needle_id]) in fold(result.successor)
                offered.append((edit, result.similarity, correct))
            elif edit in ("word", "clause"):
                offered.append((edit, result.similarity, None))  # nothing aligned at all: a miss at any threshold
        report["edits"][edit] = {"needles": len(results), "statuses": statuses, "seconds": round(seconds, 2),
                                 "as_expected": statuses.get(expected, 0)}
        print(f"{edit:12} {len(results):3} needles, {seconds:5.1f} s, expected {expected}: {statuses} "
              f"(at {threshold_in_use})")
    edited = sum(report["edits"][e]["needles"] for e in ("word", "clause"))
    report["thresholds"] = []
    print(f"\nthreshold  precision  recall   (successors offered; {edited} needles edited)")
    for threshold in THRESHOLDS:
        shown = [(e, s, c) for e, s, c in offered if c is not None and s >= threshold]
        correct = sum(c for _, _, c in shown)
        precision = correct / len(shown) if shown else 1.0
        recall = correct / edited if edited else 0.0
        wrong = {e: sum(1 for x, _, c in shown if x == e and not c) for e in EXPECTED}
        report["thresholds"].append({"threshold": threshold, "offered": len(shown), "correct": correct,
                                     "precision": round(precision, 3), "recall": round(recall, 3), "wrong": wrong})
        marker = "  <- SUCCESSOR_SIMILARITY" if threshold == threshold_in_use else ""
        print(f"  {threshold:4.2f}     {precision:6.3f}   {recall:6.3f}   ({len(shown)}; wrong by edit "
              f"{ {k: v for k, v in wrong.items() if v} }){marker}")
    true = sorted(s for e, s, c in offered if c)
    false = sorted(s for e, s, c in offered if c is False)
    print(f"\nsimilarity of the right successors: min {true[0] if true else None}, median "
          f"{true[len(true) // 2] if true else None}; of wrong ones: max {false[-1] if false else None}")
    report["right_similarity_min"] = true[0] if true else None
    report["wrong_similarity_max"] = false[-1] if false else None
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
