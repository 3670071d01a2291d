"""The terminal screen of ``rag-assets needles label`` (prompt_toolkit, full screen): one question, its
pooled sentences best first with their document, section and a little context, and one key per decision.
Every decision is saved at once (the session file and both output files), so a stop loses nothing."""

from __future__ import annotations

import time
from pathlib import Path

from rag_assets.lib.evalsets.labelling import NEAR, NEEDLE, OFF_TOPIC, SKIP, Session

PAGE = 9  # sentences on one page: one digit picks one
KEYS = ("1-9 pick · d the question in the docs' words · n not answered (near) · o not answered (off-topic) · "
        "s skip · u undo · m more · b back · q quit")


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "time left: after the first answer"
    return f"about {max(1, round(seconds / 60))} min left" if seconds >= 60 else f"about {round(seconds)} s left"


class Screen:
    def __init__(self, session: Session, out: Path, out_of_domain: Path) -> None:
        self.session, self.out, self.out_of_domain = session, out, out_of_domain
        self.page, self.shown_at, self.said = 0, time.monotonic(), ""

    def text(self) -> list[tuple[str, str]]:
        session = self.session
        question = session.current()
        counts = session.counts()
        head = (f"Question {len(session.decisions) + 1 if question else len(session.questions)} of "
                f"{len(session.questions)} · {counts[NEEDLE]} answered · {counts[NEAR] + counts[OFF_TOPIC]} not "
                f"answered · {counts[SKIP]} skipped · {_minutes(session.seconds_left())}\n\n")
        if question is None:
            return [("bold", head), ("", "Every question has a decision. u undoes the last; q quits.\n"),
                    ("italic", self.said)]
        offers = session.offers.get(question["id"], [])
        first = self.page * PAGE
        lines: list[tuple[str, str]] = [("bold", head), ("bold", f"  {question['text']}\n"),
                                        ("italic", f"  ({question['source']})\n")]
        phrased = session.phrasings.get(question["id"])
        lines.append(("", f"  in the docs' words: {phrased}\n\n" if phrased else "\n"))
        if not offers:
            lines.append(("", "  No sentence was pooled for this question: n, o or s.\n"))
        for number, offer in enumerate(offers[first:first + PAGE], 1):
            where = f"{offer['doc_id']} · {offer['section']}" if offer["section"] else offer["doc_id"]
            mark = f" {number} " if not offer.get("problem") else "   "
            lines += [("bold", f"{mark}"), ("", f" {where}"),
                      ("italic", f"  ({offer['problem']}: cannot be a needle)\n" if offer.get("problem") else "\n"),
                      ("", f"     …{offer['before'][-90:]} "), ("reverse", offer["text"]),
                      ("", f" {offer['after'][:90]}…\n")]
        pages = max(1, -(-len(offers) // PAGE))
        lines += [("", f"\n  page {self.page + 1} of {pages} ({len(offers)} sentences)\n\n"), ("italic", KEYS + "\n"),
                  ("bold", self.said)]
        return lines

    def decide(self, kind: str, number: int | None = None) -> None:
        question = self.session.current()
        if question is None:
            return
        offer = None
        if kind == NEEDLE:
            offers = self.session.offers.get(question["id"], [])
            position = self.page * PAGE + (number or 0) - 1
            if not 0 <= position < len(offers) or offers[position].get("problem"):
                self.said = f"no sentence {number} to pick on this page"
                return
            offer = offers[position]
        self.session.decide(question["id"], kind, offer, time.monotonic() - self.shown_at)
        self.saved(f"decided: {kind if kind != NEEDLE else 'sentence ' + str(number)}")

    def phrase(self, text: str) -> None:
        """The current question in the documentation's words (the needle's ``doc`` phrasing when it is
        picked); an empty line takes it back."""
        question = self.session.current()
        if question is not None:
            self.session.phrase(question["id"], text)
            self.session.save()
            self.said = "docs phrasing kept: pick its sentence" if text.strip() else "docs phrasing taken back"

    def undo(self) -> None:
        taken = self.session.undo()
        self.saved("undone: the last decision" if taken else "nothing to undo")

    def saved(self, said: str) -> None:
        self.session.save()
        self.session.write_outputs(self.out, self.out_of_domain)
        self.page, self.shown_at, self.said = 0, time.monotonic(), said

    def turn(self, step: int) -> None:
        question = self.session.current()
        offers = self.session.offers.get(question["id"], []) if question else []
        self.page = min(max(0, self.page + step), max(0, (len(offers) - 1) // PAGE))


def label_in_terminal(session: Session, out: Path, out_of_domain: Path) -> None:
    from prompt_toolkit import Application
    from prompt_toolkit.application import run_in_terminal
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    screen = Screen(session, out, out_of_domain)
    keys = KeyBindings()
    for digit in "123456789":
        keys.add(digit)(lambda event, digit=digit: screen.decide(NEEDLE, int(digit)))
    keys.add("d")(lambda event: run_in_terminal(
        lambda: screen.phrase(input("The question in the documentation's words (Enter alone takes it back): "))))
    keys.add("n")(lambda event: screen.decide(NEAR))
    keys.add("o")(lambda event: screen.decide(OFF_TOPIC))
    keys.add("s")(lambda event: screen.decide(SKIP))
    keys.add("u")(lambda event: screen.undo())
    keys.add("m")(lambda event: screen.turn(1))
    keys.add("b")(lambda event: screen.turn(-1))
    keys.add("q")(lambda event: event.app.exit())
    keys.add("c-c")(lambda event: event.app.exit())
    application = Application(layout=Layout(HSplit([Window(FormattedTextControl(screen.text), wrap_lines=True)])),
                              key_bindings=keys, full_screen=True)
    application.run()
    session.save()
    session.write_outputs(out, out_of_domain)
