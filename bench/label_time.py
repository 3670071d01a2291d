"""How long labelling 30 questions takes through the terminal, with a scripted labeller (tmux): the time
until the first question is on the screen (reading the questions and pooling them from every configuration),
and the time from each key to the next question's screen (saving the session and both files, drawing).

    RAG_ASSETS_HOME=<an evaluated storage folder> python bench/label_time.py --corpus C --eval-set N [--questions 30]

The questions are the `ticket` phrasings of the evaluation set's first needles; the labeller presses `1`
(the first sentence offered) for each. A person's reading time is not measured: it is theirs.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
SOCKET = "rag-assets-bench"


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=True).stdout


def wait_for(said: str, limit: float = 1800) -> float:
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if said in tmux("capture-pane", "-p", "-t", "label"):
            return time.monotonic()
        time.sleep(0.02)
    raise SystemExit(f"{said!r} never shown:\n{tmux('capture-pane', '-p', '-t', 'label')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--eval-set", required=True)
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    needles = [json.loads(line) for line in Path(args.eval_set).read_text().splitlines() if line.strip()]
    questions = [n["questions"]["ticket"] for n in needles][:args.questions]
    folder = Path(tempfile.mkdtemp(prefix="label-time-"))
    (folder / "questions.txt").write_text("\n".join(questions) + "\n")
    out = folder / "labelled.jsonl"
    environment = " ".join(f"{k}={shlex.quote(v)}" for k, v in os.environ.items() if k.startswith(("RAG_ASSETS_", "HF_")))
    command = (f"cd {PROJECT} && env {environment} {sys.executable} -m rag_assets.cli needles label "
               f"{folder / 'questions.txt'} --out {out} --corpus {shlex.quote(args.corpus)}; sleep 600")
    started = time.monotonic()
    tmux("new-session", "-d", "-s", "label", "-x", "200", "-y", "60", command)
    try:
        shown = wait_for(f"Question 1 of {len(questions)}")
        first = shown - started
        keys = []
        for number in range(1, len(questions) + 1):
            sent = time.monotonic()
            tmux("send-keys", "-t", "label", "1")
            after = f"Question {number + 1} of" if number < len(questions) else "Every question has a decision"
            keys.append(wait_for(after) - sent)
        tmux("send-keys", "-t", "label", "q")
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    total = time.monotonic() - started
    print(f"{len(questions)} questions: first question on the screen after {first:.1f} s (reading and pooling); "
          f"each key to the next screen: median {statistics.median(keys) * 1000:.0f} ms, "
          f"max {max(keys) * 1000:.0f} ms; whole session {total:.1f} s; "
          f"{len(out.read_text().splitlines())} needles written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
