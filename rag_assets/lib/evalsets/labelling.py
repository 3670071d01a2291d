"""A labelling session: real questions, each with its pooled sentences (``pooling.py``), and a person's
decisions, kept in one JSON file beside the output so that a stop loses nothing and the next start resumes.

A decision is one of: the sentence that answers the question (it becomes a needle, the question its
``ticket`` phrasing), "not answered by this corpus" (``near``: a question a user of the corpus asks that it
does not answer; ``off_topic``), or ``skip``. Two questions answered by the same sentence are one needle
with two phrasings (``ticket``, ``ticket_2``): the needle, not the phrasing, is the unit of evidence. The
labeller may add the question in the documentation's words (the ``doc`` phrasing). Undo
takes back the last decision. The needle file written after each decision is one the evaluation accepts
(``origin: labelled``: the real question is the phrasing that must be there), and the out-of-domain file
holds the unanswered questions.

``agreement`` compares two labellers' sessions: Cohen's kappa over answered / not answered, and over the
chosen sentence where both answered, with the disagreements to settle.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from rag_assets.lib.formats.jsonl import read_json_lines

NEEDLE, NEAR, OFF_TOPIC, SKIP = "needle", "near", "off_topic", "skip"
KINDS = (NEEDLE, NEAR, OFF_TOPIC, SKIP)
LABELLED = "labelled"
SESSION_VERSION = 1


class LabellingError(ValueError):
    """A session or choices file that cannot be used: the message names the file (and line)."""


def _write_atomically(path: Path, text: str) -> None:
    staging = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    staging.write_text(text, encoding="utf-8")
    os.replace(staging, path)


@dataclass
class Session:
    path: Path
    questions: list[dict]  # {"id", "text", "source"}
    offers: dict[str, list[dict]]  # question id -> offer rows (pooling.Offer.row), best first
    decisions: list[dict]  # {"question_id", "kind", "sentence" (an offer row or None), "seconds", "labeller"}
    labeller: str = ""
    configurations: Sequence[str] = ()
    left_out: Sequence[str] = ()
    phrasings: dict[str, str] = field(default_factory=dict)  # question id -> the question in the docs' words

    @classmethod
    def load(cls, path: Path) -> Session | None:
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise LabellingError(f"{path}: not a labelling session ({error}); move it aside to start again") from None
        except OSError as error:
            raise LabellingError(f"{path}: cannot be read ({error.strerror or error})") from None
        problem = session_problem(data)
        if problem:
            raise LabellingError(f"{path}: not a labelling session: {problem}")
        return cls(path, data["questions"], data["offers"], data["decisions"], data.get("labeller", ""),
                   data.get("configurations", []), data.get("left_out", []), data.get("phrasings", {}))

    def save(self) -> None:
        _write_atomically(self.path, json.dumps({
            "version": SESSION_VERSION, "labeller": self.labeller, "configurations": list(self.configurations),
            "left_out": list(self.left_out), "questions": self.questions, "offers": self.offers,
            "decisions": self.decisions, "phrasings": self.phrasings}, ensure_ascii=False, indent=1))

    def add_questions(self, questions: Sequence[dict], offers: dict[str, list[dict]]) -> int:
        """Questions not in the session yet (a grown log), with their offers; how many were added."""
        known = {q["id"] for q in self.questions}
        new = [q for q in questions if q["id"] not in known]
        self.questions += new
        self.offers.update({q["id"]: offers.get(q["id"], []) for q in new})
        return len(new)

    # --- where the person is ---------------------------------------------------------------------

    def decided(self) -> dict[str, dict]:
        return {d["question_id"]: d for d in self.decisions}

    def current(self) -> dict | None:
        """The first question without a decision, or None when every one has one."""
        done = self.decided()
        return next((q for q in self.questions if q["id"] not in done), None)

    def counts(self) -> dict[str, int]:
        counts = {kind: 0 for kind in KINDS}
        for decision in self.decisions:
            counts[decision["kind"]] += 1
        return counts

    def seconds_left(self) -> float | None:
        """The time the open questions will take at this labeller's pace so far (None before a decision)."""
        timed = [d["seconds"] for d in self.decisions if d.get("seconds")]
        if not timed:
            return None
        return sum(timed) / len(timed) * (len(self.questions) - len(self.decisions))

    # --- deciding ----------------------------------------------------------------------------------

    def decide(self, question_id: str, kind: str, offer: dict | None = None, seconds: float = 0.0) -> dict:
        if kind not in KINDS:
            raise ValueError(f"a decision is one of {', '.join(KINDS)}")
        if kind == NEEDLE and (offer is None or offer.get("problem")):
            raise ValueError("only an offered sentence that can be a needle is picked")
        decision = {"question_id": question_id, "kind": kind, "sentence": offer if kind == NEEDLE else None,
                    "seconds": round(seconds, 3), "labeller": self.labeller, "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
        self.decisions = [d for d in self.decisions if d["question_id"] != question_id] + [decision]
        return decision

    def phrase(self, question_id: str, text: str) -> None:
        """The question as the documentation would put it (the needle's ``doc`` phrasing, beside the real
        question as ``ticket``); an empty text takes it back."""
        text = " ".join(text.split())
        if text:
            self.phrasings[question_id] = text
        else:
            self.phrasings.pop(question_id, None)

    def undo(self) -> dict | None:
        """Take back the last decision; returns it (None when there is none)."""
        return self.decisions.pop() if self.decisions else None

    # --- what it makes -----------------------------------------------------------------------------

    def needle_rows(self) -> list[dict]:
        """The needle file's rows: one per picked sentence, each question that picked it a phrasing."""
        texts = {q["id"]: q for q in self.questions}
        needles: dict[tuple, dict] = {}
        for decision in self.decisions:
            if decision["kind"] != NEEDLE:
                continue
            sentence = decision["sentence"]
            key = (sentence["doc_id"], sentence["start"], sentence["end"])
            question = texts[decision["question_id"]]
            if key not in needles:
                needles[key] = {
                    "id": f"l{len(needles) + 1:03d}", "doc_id": sentence["doc_id"], "needle": sentence["text"],
                    "questions": {}, "kind": "prose", "origin": LABELLED, "section": sentence["section"],
                    "locator": f"#char={sentence['start']},{sentence['end']}", "asked": []}
            phrasings = needles[key]["questions"]
            for name, text in (("ticket", question["text"]), ("doc", self.phrasings.get(question["id"]))):
                taken = sum(1 for known in phrasings if known == name or known.startswith(f"{name}_"))
                if text:
                    phrasings[name if not taken else f"{name}_{taken + 1}"] = text
            needles[key]["asked"].append({"question_id": question["id"], "source": question["source"]})
        return list(needles.values())

    def out_of_domain_rows(self) -> list[dict]:
        texts = {q["id"]: q for q in self.questions}
        return [{"id": d["question_id"], "query": texts[d["question_id"]]["text"], "kind": d["kind"]}
                for d in self.decisions if d["kind"] in (NEAR, OFF_TOPIC)]

    def write_outputs(self, needles: Path, out_of_domain: Path) -> None:
        _write_atomically(needles, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.needle_rows()))
        _write_atomically(out_of_domain, "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                 for r in self.out_of_domain_rows()))


# --- a choices file: the same decisions without a person --------------------------------------------


def session_problem(data) -> str | None:
    """What keeps ``data`` (a session file's JSON) from being a session of this version, or None."""
    if not isinstance(data, dict):
        return f"it holds a JSON {type(data).__name__}, a session is an object (written by `rag-assets needles label`)"
    if data.get("version") != SESSION_VERSION:
        return f"a session of version {data.get('version')!r}, this is {SESSION_VERSION}"
    for key, kind in (("questions", list), ("offers", dict), ("decisions", list)):
        if not isinstance(data.get(key), kind):
            return f"{key!r} must be a JSON {'list' if kind is list else 'object'}"
    if not all(isinstance(q, dict) and isinstance(q.get("id"), str) and isinstance(q.get("text"), str)
               for q in data["questions"]):
        return "each question is an object with a string 'id' and 'text'"
    if not all(isinstance(d, dict) and isinstance(d.get("question_id"), str) and d.get("kind") in KINDS
               for d in data["decisions"]):
        return f"each decision is an object with a string 'question_id' and a 'kind' of {', '.join(KINDS)}"
    sentence_fields = {"doc_id": str, "start": int, "end": int, "text": str}
    if not all(isinstance(d.get("sentence"), dict) and all(isinstance(d["sentence"].get(key), kind)
                                                           for key, kind in sentence_fields.items())
               for d in data["decisions"] if d["kind"] == NEEDLE):
        return "a needle decision's 'sentence' is an object with doc_id, start, end and text"
    return None


def choice_problem(record: dict) -> str | None:
    """What is wrong with one line of a choices file, field by field, or None."""
    if not ({"question", "id"} & set(record)) or not ({"choice", "sentence", "kind"} & set(record)):
        return ("a choice names its question (question or id) and one of choice (a number), sentence (its text) "
                "or kind (near, off_topic, skip)")
    decided = sorted({"choice", "sentence", "kind"} & set(record))
    if len(decided) > 1:
        return f"one decision per line: {' and '.join(decided)} are both given"
    for key in ("question", "id", "sentence"):
        if key in record and (not isinstance(record[key], str) or not record[key].strip()):
            return f"{key} must be a non-empty string, not {json.dumps(record[key])}"
    if "choice" in record and (isinstance(record["choice"], bool) or not isinstance(record["choice"], int)
                               or record["choice"] < 1):
        return f"choice is the offered sentence's number, from 1, not {json.dumps(record['choice'])}"
    if "kind" in record and record["kind"] not in (NEAR, OFF_TOPIC, SKIP):
        return f"kind is near, off_topic or skip, not {json.dumps(record['kind'])}"
    if "doc" in record and not isinstance(record["doc"], str):
        return f"doc is the question in the documentation's words, a string, not {json.dumps(record['doc'])}"
    return None


def read_choices(path: Path) -> list[dict]:
    """JSON Lines, one decision each: ``{"question": text}`` (or ``"id"``) and one of ``"choice"`` (the
    offered sentence's number, from 1), ``"sentence"`` (its text) or ``"kind"`` (near, off_topic, skip), and
    optionally ``"doc"``: the question in the documentation's words. LabellingError names the line and the
    field at fault."""
    path = Path(path)
    if not path.exists() or path.is_dir():
        raise LabellingError(f"choices file {path} {'is a folder' if path.is_dir() else 'does not exist'}")
    choices = []
    try:
        for where, record, problem in read_json_lines(path, max_line_chars=256 * 1024):
            problem = problem or choice_problem(record)
            if problem:
                raise LabellingError(problem if problem.startswith(where) else f"{where}: {problem}")
            choices.append(record | {"where": where})
    except UnicodeDecodeError as error:
        raise LabellingError(f"{path}: not UTF-8 (byte {error.start} of a line)") from None
    return choices


def apply_choice(session: Session, choice: dict) -> dict:
    """One choice of a choices file, decided in ``session``; LabellingError naming its line when it does not
    fit (an unknown question, a number past the offers, a sentence not offered, one that cannot be a needle)."""
    from rag_assets.lib.evalsets.questions import question_id

    problem = choice_problem(choice)
    if problem:
        raise LabellingError(f"{choice.get('where', 'a choice')}: {problem}")
    wanted = choice["id"] if "id" in choice else question_id(choice["question"])
    question = next((q for q in session.questions if q["id"] == wanted), None)
    if question is None:
        raise LabellingError(f"{choice['where']}: no such question in the session")
    offered = session.offers.get(question["id"], [])
    if "kind" in choice:
        return session.decide(question["id"], choice["kind"])
    if "choice" in choice:
        number = choice["choice"]
        if number > len(offered):
            raise LabellingError(f"{choice['where']}: choice {number!r}: {len(offered)} sentences were offered")
        offer = offered[number - 1]
    else:
        offer = next((o for o in offered if " ".join(o["text"].split()) == " ".join(choice["sentence"].split())), None)
        if offer is None:
            raise LabellingError(f"{choice['where']}: the sentence is not among the {len(offered)} offered")
    if offer.get("problem"):
        raise LabellingError(f"{choice['where']}: that sentence cannot be a needle ({offer['problem']})")
    if "doc" in choice:
        session.phrase(question["id"], choice["doc"])
    return session.decide(question["id"], NEEDLE, offer)


# --- two labellers -----------------------------------------------------------------------------------


def cohens_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters' categories; None when it is undefined (no pair, or chance agreement 1)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    categories = {a for a, _ in pairs} | {b for _, b in pairs}
    expected = sum((sum(a == c for a, _ in pairs) / n) * (sum(b == c for _, b in pairs) / n) for c in categories)
    return None if expected >= 1.0 else (observed - expected) / (1.0 - expected)


def agreement(first: Session, second: Session) -> dict:
    """Both labellers' decisions on the questions both decided (skips left out): kappa over answered / not
    answered and over the chosen sentence where both answered, and every disagreement."""
    a, b = first.decided(), second.decided()
    texts = {q["id"]: q["text"] for q in [*first.questions, *second.questions]}
    shared = [qid for qid in a if qid in b and a[qid]["kind"] != SKIP and b[qid]["kind"] != SKIP]

    def answered(decision: dict) -> str:
        return "answered" if decision["kind"] == NEEDLE else "not answered"

    def sentence(decision: dict) -> str:
        s = decision["sentence"]
        return f"{s['doc_id']}#char={s['start']},{s['end']}"

    both = [qid for qid in shared if a[qid]["kind"] == NEEDLE and b[qid]["kind"] == NEEDLE]
    disagreements = []
    for qid in shared:
        left, right = a[qid], b[qid]
        if answered(left) != answered(right) or (qid in both and sentence(left) != sentence(right)):
            disagreements.append({"question": texts[qid],
                                  "first": left["sentence"]["text"] if left["sentence"] else left["kind"],
                                  "second": right["sentence"]["text"] if right["sentence"] else right["kind"]})
    return {"questions": len(shared), "answered_kappa": cohens_kappa([(answered(a[q]), answered(b[q])) for q in shared]),
            "answered_agreement": sum(answered(a[q]) == answered(b[q]) for q in shared) / len(shared) if shared else None,
            "both_answered": len(both),
            "sentence_kappa": cohens_kappa([(sentence(a[q]), sentence(b[q])) for q in both]),
            "sentence_agreement": sum(sentence(a[q]) == sentence(b[q]) for q in both) / len(both) if both else None,
            "disagreements": disagreements}
