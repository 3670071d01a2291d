"""How the needle suggester compares with the needles people wrote for the default corpus.

    python bench/needle_mining.py [--show 50]

Mines the default corpus with the suggester's defaults (meaning check under all-MiniLM-L6-v2 at cosine
0.85) and counts how many of the hand-written needles (data/eval) it would have proposed at all (with no
cap on candidates per document or in total) and how many are among the 50 it proposes by default. With
``--show N`` it prints N proposed candidates for a person to judge (usable as a needle or not); the
judgement recorded in BENCHMARKS.md is a person's, not this script's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.cli.corpus_text import corpus_documents  # noqa: E402
from rag_assets.lib.embed.models import DEFAULT_MODEL, load_model  # noqa: E402
from rag_assets.lib.evalsets.mining import candidates  # noqa: E402
from rag_assets.lib.ingest.canonical import fold_whitespace  # noqa: E402
from rag_assets.settings import DEFAULT_CORPUS_DIR, DEFAULT_EVAL_SET  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", type=int, default=0)
    args = parser.parse_args()
    import tempfile

    documents = corpus_documents(DEFAULT_CORPUS_DIR, Path(tempfile.mkdtemp()))
    embed = load_model(DEFAULT_MODEL).embed
    written = [fold_whitespace(json.loads(line)["needle"]) for line in DEFAULT_EVAL_SET.read_text().splitlines()
               if line.strip()]
    every = candidates(documents, per_document=10**6, total=10**6, embed=embed)
    proposed = candidates(documents, embed=embed)
    eligible = {fold_whitespace(c.text) for c in every.candidates}
    default = {fold_whitespace(c.text) for c in proposed.candidates}
    print(f"{len(documents)} documents, {every.sentences} prose sentences; eligible {len(eligible)} (left out: "
          f"{every.repeated} repeated, {every.restated} restated elsewhere)")
    print(f"hand-written needles: {len(written)}; the suggester would have proposed {sum(w in eligible for w in written)} "
          f"of them with no cap, {sum(w in default for w in written)} among its default {len(default)}")
    for number, candidate in enumerate(proposed.candidates[: args.show], start=1):
        print(f"{number:2}. [{candidate.doc_id} > {candidate.section.split(' > ')[-1]}] {candidate.text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
