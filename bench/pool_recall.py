"""Pool recall: does `needles label` offer the right sentence? An evaluation set with known needles is treated
as the team's log: each needle's questions (every phrasing) are pooled as `needles label` pools them, from
every configuration of the latest evaluation in a storage folder, and the true needle is looked for among the
sentences offered.

    RAG_ASSETS_HOME=<an evaluated storage folder> python bench/pool_recall.py --corpus C --eval-set N [--depth 10]

Prints recall at 5 and at 10 (the needle is one of the first 5 / 10 sentences that can be needles, whole:
the offered sentence is the needle or holds it; and, apart, counting a sentence that is most of a needle of
several sentences) with Wilson intervals over questions and over needles (a
needle counts when all of its questions find it), how many sentences a person reads per question (down to
the needle; all offered when it is not there), and the time pooling took.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.cli.labelling import build_offers  # noqa: E402
from rag_assets.lib.evalsets.queries import load_needles  # noqa: E402
from rag_assets.lib.evalsets.questions import Question, question_id  # noqa: E402
from rag_assets.lib.evaluate.intervals import wilson_interval  # noqa: E402
from rag_assets.lib.ingest.folding import fold  # noqa: E402
from rag_assets.settings import current  # noqa: E402


def share(hits: int, n: int) -> str:
    low, high = wilson_interval(hits, n)
    return f"{hits / n:.3f} [{low:.2f}, {high:.2f}] ({hits} of {n})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--eval-set", required=True)
    parser.add_argument("--depth", type=int, default=10)
    args = parser.parse_args()
    needles = load_needles(Path(args.eval_set))
    questions, truth = [], {}
    for needle in needles:
        for phrasing, text in sorted(needle.questions.items()):
            if text.strip() and question_id(text) not in truth:
                questions.append(Question(question_id(text), text, f"{needle.id}:{phrasing}"))
                truth[question_id(text)] = needle
    started = time.perf_counter()
    offers, configurations, left_out = build_offers(questions, current().home, Path(args.corpus), args.depth,
                                                    lambda line: print(line, file=sys.stderr, flush=True))
    seconds = time.perf_counter() - started
    ranks, reads, by_needle, parts = [], [], {}, []
    for question in questions:
        needle = fold(truth[question.id].needle)
        pickable = [o for o in offers[question.id] if not o["problem"]]
        rank = next((i for i, o in enumerate(pickable, 1) if needle in fold(o["text"])), None)
        # a needle of two sentences: one of them, most of the needle, answers as well
        parts.append(next((i for i, o in enumerate(pickable, 1) if needle in fold(o["text"]) or (
            fold(o["text"]) in needle and len(fold(o["text"])) >= 0.4 * len(needle))), None))
        ranks.append(rank)
        reads.append(rank if rank is not None else len(pickable))
        by_needle.setdefault(truth[question.id].id, []).append(rank)
    n = len(questions)
    print(f"{args.eval_set}: {n} questions of {len(needles)} needles, pooled from {len(configurations)} configurations "
          f"to depth {args.depth} in {seconds:.0f} s ({seconds / n:.2f} s a question)"
          + (f"; not asked: {'; '.join(left_out)}" if left_out else ""))
    for at in (1, 5, 10):
        hits = sum(rank is not None and rank <= at for rank in ranks)
        needle_hits = sum(all(r is not None and r <= at for r in found) for found in by_needle.values())
        print(f"recall@{at}: questions {share(hits, n)}; needles {share(needle_hits, len(by_needle))}")
    print("a sentence of the needle (a needle of several sentences is answered by one of them): "
          + "; ".join(f"recall@{at} {share(sum(r is not None and r <= at for r in parts), n)}" for at in (5, 10)))
    print(f"offered at all: {share(sum(r is not None for r in ranks), n)}")
    print(f"sentences read per question: mean {statistics.mean(reads):.1f}, median {statistics.median(reads):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
