"""The default corpus with ten needle sentences edited as writers edit them, evaluated end to end; then the needle
file repaired from a choices file and checked.

    python bench/edited_corpus.py [--models all-MiniLM-L6-v2] [--strategies boundaries_header] [--keep DIR]

Two needles each: typographic (an apostrophe made curly, or a space a no-break space: the folded text is the same),
one word changed, a clause added, moved to another page, deleted. Each edit is made in a copy of the HTML source
(only needles that stand verbatim in their page's source are chosen). Then ``rag-assets evaluate`` runs on the
copy in a fresh storage folder; the verdict's lines on the needles are printed with what each edit became; then
``rag-assets needles repair --choices`` accepts every successor and drops the removed needles, and ``rag-assets
needles check`` runs on the file it wrote. Prints the seconds of each step.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from bench.needle_edits import clause, word  # noqa: E402
from rag_assets.settings import DEFAULT_CORPUS_DIR, DEFAULT_EVAL_SET, DEFAULT_OUT_OF_DOMAIN  # noqa: E402

KINDS = ("typographic", "word", "clause", "moved", "deleted")


def typographic_html(sentence: str) -> str:
    """A typographic edit of the source: a curly apostrophe made straight (or the reverse), else a no-break space."""
    if "\u2019" in sentence:
        return sentence.replace("\u2019", "'", 1)
    return sentence.replace("'", "\u2019", 1) if "'" in sentence else sentence.replace(" ", "&nbsp;", 1)


ANCHOR = 16  # characters of a needle's start and end looked for in its page's source


def spelling(needle: str, source: str) -> str | None:
    """The stretch of HTML source that renders as ``needle``: from where its first ``ANCHOR`` characters start to
    where its last end (markup such as <code> may lie between), or None when the source does not hold both."""
    for text in (needle, needle.replace("'", "\u2019")):
        if text in source:
            return text
        head, tail = text[:ANCHOR], text[-ANCHOR:]
        start = source.find(head)
        end = source.find(tail, start + 1) if start >= 0 else -1
        if start >= 0 and end >= 0 and end + ANCHOR - start <= 3 * len(text) and "</p>" not in source[start:end]:
            return source[start:end + ANCHOR]
    return None


def outside_tags(snippet: str, edit) -> str:
    """``edit`` applied to the text of an HTML snippet with its tags set aside (put back where they were)."""
    import re

    tags = re.findall(r"<[^>]*>", snippet)
    text = re.sub(r"<[^>]*>", "\x00", snippet)
    edited = edit(text)
    for tag in tags:
        edited = edited.replace("\x00", tag, 1)
    return edited


def edit(corpus: Path, needles: list[dict]) -> dict[str, str]:
    """Two needles of each kind edited in ``corpus`` (HTML source); {needle id: kind}."""
    pages = sorted(p for p in corpus.rglob("*.html"))
    chosen: dict[str, str] = {}
    usable = []
    for needle in needles:  # as the page's source spells it (Sphinx's curly apostrophe, markup inside it)
        spelled = spelling(needle["needle"], (corpus / needle["doc_id"]).read_text(encoding="utf-8"))
        if spelled:
            usable.append({**needle, "needle": spelled})
    for kind in KINDS:
        for needle in [n for n in usable if n["id"] not in chosen][:2]:
            source = corpus / needle["doc_id"]
            text = source.read_text(encoding="utf-8")
            new = outside_tags(needle["needle"], {"typographic": typographic_html, "word": word, "clause": clause}
                               .get(kind, lambda s: ""))
            source.write_text(text.replace(needle["needle"], new, 1), encoding="utf-8")
            if kind == "moved":
                target = next(p for p in pages if p.relative_to(corpus).as_posix() != needle["doc_id"])
                page = target.read_text(encoding="utf-8")
                at = page.index("</section>", page.index('role="main"'))  # the end of the first section's text
                target.write_text(page[:at] + f"\n<p>{needle['needle']}</p>" + page[at:], encoding="utf-8")
            chosen[needle["id"]] = kind
    return chosen


def run(env: dict, *args: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rag_assets.cli", *args], env=env, capture_output=True, text=True,
                          cwd=PROJECT)
    return done, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["all-MiniLM-L6-v2"])
    parser.add_argument("--strategies", nargs="+", default=["boundaries_header"])
    parser.add_argument("--keep", type=Path, help="work here (kept) instead of a temporary folder")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="edited-corpus-"))
    corpus = root / "corpus"
    shutil.rmtree(corpus, ignore_errors=True)
    shutil.copytree(DEFAULT_CORPUS_DIR, corpus)
    needles = [json.loads(line) for line in DEFAULT_EVAL_SET.read_text().splitlines() if line.strip()]
    chosen = edit(corpus, needles)
    print(f"edited {len(chosen)} needles: " + ", ".join(f"{k} {v}" for k, v in chosen.items()))
    home = root / "home"
    env = {**os.environ, "RAG_ASSETS_HOME": str(home), "DAGSTER_HOME": str(home / "dagster"),
           "RAG_ASSETS_CORPUS": str(corpus), "RAG_ASSETS_EVAL_SET": str(DEFAULT_EVAL_SET),
           "RAG_ASSETS_OUT_OF_DOMAIN": str(DEFAULT_OUT_OF_DOMAIN), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done, seconds = run(env, "evaluate", "--models", *args.models, "--strategies", *args.strategies)
    print(f"evaluate: exit {done.returncode} in {seconds:.0f} s")
    if done.returncode:
        print(done.stderr[-3000:])
        return 1
    verdict = done.stdout[done.stdout.index("The needles:"):] if "The needles:" in done.stdout else ""
    print(verdict[:verdict.find("The questions")] if "The questions" in verdict else verdict)
    for needle_id, kind in chosen.items():
        line = next((line.strip() for line in verdict.splitlines() if line.strip().startswith(f"{needle_id}:")
                     or f"{needle_id} (" in line), "not named (kept)")
        print(f"  {kind:12} {needle_id}: {line[:160]}")
    with __import__("duckdb").connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        changes = dict(connection.sql("SELECT needle_id, status FROM needle_changes").fetchall())
    choices = root / "choices.jsonl"
    choices.write_text("".join(json.dumps({"id": n, "choice": "accept" if s == "edited" else "drop"}) + "\n"
                               for n, s in changes.items() if s not in ("kept", "moved")))
    repaired = root / "needles.repaired.jsonl"
    done, seconds = run(env, "needles", "repair", str(DEFAULT_EVAL_SET), "--corpus", str(corpus), "--choices",
                        str(choices), "--out", str(repaired), "--force")
    print(f"needles repair: exit {done.returncode} in {seconds:.0f} s\n{done.stdout}{done.stderr}")
    done, seconds = run(env, "needles", "check", str(repaired), "--corpus", str(corpus))
    print(f"needles check: exit {done.returncode} in {seconds:.0f} s\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
