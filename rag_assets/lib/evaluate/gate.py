"""A pull request's verdict (``rag-assets gate``): this run against a stored baseline run, configuration by
configuration, on the needles present and unchanged in both, one family of paired tests at the decision's budget
adjusted by Holm. It fails when the baseline's pick drops significantly at the budget, when the pick changes, or
when the docs lost the answer of a needle the baseline asked (its sentence removed: no sentence is like it).

It reads two DuckDB files (or one, for a baseline run of the same storage folder) and writes nothing to them; the
caller writes its Markdown summary (for a pull-request comment) and its JUnit XML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

import duckdb

from rag_assets.lib.evalsets.relocation import HELD
from rag_assets.lib.evaluate import catalog
from rag_assets.lib.evaluate.comparisons import name_of
from rag_assets.lib.evaluate.multiplicity import adjust
from rag_assets.lib.evaluate.needle_changes import (
    changes_of_run,
    left_out_between,
    needle_changes_of_run,
    needles_of_run,
)
from rag_assets.lib.evaluate.paired_tests import paired_test
from rag_assets.lib.evaluate.regressions import per_needle
from rag_assets.lib.formats.markdown import escape_markdown, markdown_table

ALPHA = 0.05
SHOWN = 20  # needles named one by one in the summary


@dataclass(frozen=True)
class Baseline:
    """What the gate needs of the baseline, read before this run is evaluated (it may share the file)."""
    run_id: str
    snapshot_id: str
    eval_version: str
    pick: tuple[str, str, str] | None
    budget: int
    values: dict  # {configuration: {needle: {measure: value}}} at the budget
    needles: dict[str, str] | None  # run_needles: {needle id: hash}
    configurations: list[tuple[str, str]]  # (model, strategy) it evaluated


@dataclass(frozen=True)
class Compared:
    configuration: tuple[str, str, str]
    baseline: float
    now: float
    wins: int
    losses: int
    needles: int
    p_value: float
    p_adjusted: float

    @property
    def drop(self) -> bool:
        return self.losses > self.wins and self.p_adjusted < ALPHA


@dataclass
class GateResult:
    baseline: Baseline
    run_id: str
    snapshot_id: str
    pick: tuple[str, str, str] | None
    compared: list[Compared] = field(default_factory=list)
    flipped: dict[str, list[str]] = field(default_factory=dict)  # the baseline pick's needles: "lost", "gained"
    left_out: dict[str, list[str]] = field(default_factory=dict)  # why needles were not compared
    lost: list[dict] = field(default_factory=list)  # this run's needle_changes not held

    @property
    def pick_changed(self) -> bool:
        return self.pick != self.baseline.pick

    @property
    def pick_dropped(self) -> Compared | None:
        return next((c for c in self.compared if c.configuration == self.baseline.pick and c.drop), None)

    @property
    def removed(self) -> list[dict]:
        """The needles the baseline asked whose answer the docs no longer hold (``removed``)."""
        asked = set(self.baseline.needles or {}) | {n for by in self.baseline.values.values() for n in by}
        return [c for c in self.lost if c["status"] == "removed" and c["needle_id"] in asked]

    @property
    def failed(self) -> bool:
        return self.pick_changed or self.pick_dropped is not None or bool(self.removed)


def measure_of(budget: int) -> catalog.Measure:
    return catalog.budget_measure(budget)


def read_baseline(connection: duckdb.DuckDBPyConnection, run_id: str | None = None) -> Baseline:
    """The baseline: run ``run_id`` (a prefix will do), else the newest; ValueError says why it cannot be one."""
    runs = connection.sql("SELECT run_id, snapshot_id, eval_version FROM evaluation_runs ORDER BY created_at DESC, "
                          "run_id DESC").fetchall()
    if not runs:
        raise ValueError("it holds no evaluation run")
    chosen = [r for r in runs if run_id is None or r[0].startswith(run_id)]
    if not chosen:
        raise ValueError(f"it holds no evaluation run {run_id!r} (its runs: {', '.join(r[0] for r in runs[:5])})")
    run, snapshot, version = chosen[0]
    if run != runs[0][0]:  # the decision table is the newest run's
        raise ValueError(f"run {run} is not its newest run ({runs[0][0]}), whose decision it keeps: give a storage "
                         "folder whose newest run is the baseline")
    decision = connection.sql("SELECT budget, model, strategy, retriever FROM decision").fetchall()
    if not decision:
        raise ValueError("it holds no decision")
    budget, *pick = decision[0]
    measure = measure_of(budget)
    values = per_needle(connection, run, [measure])
    configurations = sorted({(m, s) for m, s, _ in values})
    return Baseline(run, snapshot, version, tuple(pick) if pick[0] else None, budget, values,
                    needles_of_run(connection, run), configurations)


def compare(baseline: Baseline, connection: duckdb.DuckDBPyConnection, run_id: str,
            pick: tuple[str, str, str] | None, snapshot_id: str) -> GateResult:
    """This run (``run_id`` in ``connection``) against the baseline, at the baseline's budget."""
    measure = measure_of(baseline.budget)
    now = per_needle(connection, run_id, [measure])
    result = GateResult(baseline, run_id, snapshot_id, pick)
    needles = needles_of_run(connection, run_id)
    if needles is not None and baseline.needles is not None:
        result.left_out = left_out_between(baseline.needles, needles, changes_of_run(connection, run_id))
        unchanged = {n for n, text in baseline.needles.items() if needles.get(n) == text}
    else:  # a baseline from before runs kept their needles: its needle ids are taken as they are
        unchanged = {n for by in baseline.values.values() for n in by}
    result.lost = [c for c in needle_changes_of_run(connection, run_id) if c["status"] not in HELD]
    tested = []
    for configuration in sorted(set(now) & set(baseline.values)):
        both = sorted(n for n in set(now[configuration]) & set(baseline.values[configuration]) if n in unchanged
                      and measure.name in now[configuration][n] and measure.name in baseline.values[configuration][n])
        if not both:
            continue
        a = [now[configuration][n][measure.name] for n in both]
        b = [baseline.values[configuration][n][measure.name] for n in both]
        tested.append((configuration, both, a, b, paired_test(measure, a, b)))
        if configuration == baseline.pick:
            result.flipped = {"lost": [n for n, x, y in zip(both, a, b) if x < y],
                              "gained": [n for n, x, y in zip(both, a, b) if x > y]}
    for (configuration, both, a, b, test), p in zip(tested, adjust([t.p_value for *_, t in tested])):
        result.compared.append(Compared(configuration, sum(b) / len(b), sum(a) / len(a), test.wins, test.losses,
                                        len(both), test.p_value, p))
    return result


def _names(needles: list[str]) -> str:
    return ", ".join(needles[:SHOWN]) + (f" and {len(needles) - SHOWN} more" if len(needles) > SHOWN else "")


def summary_markdown(result: GateResult) -> str:
    """The gate's verdict as Markdown, for a pull-request comment."""
    base, budget = result.baseline, result.baseline.budget
    compared = max((c.needles for c in result.compared), default=0)
    lines = [f"## rag-assets gate: {'FAIL' if result.failed else 'pass'}", "",
             f"This run `{result.run_id}` (corpus snapshot `{result.snapshot_id}`) against the baseline run "
             f"`{base.run_id}` (snapshot `{base.snapshot_id}`), at {budget} context tokens, over the {compared} "
             f"needles present and unchanged in both; {len(result.compared)} paired tests adjusted by Holm.", ""]
    before = name_of(base.pick) if base.pick else "nothing"
    if result.pick_changed:
        lines.append(f"**The pick changed** from {escape_markdown(before)} to "
                     f"{escape_markdown(name_of(result.pick) if result.pick else 'nothing')}.")
    else:
        lines.append(f"**The pick is unchanged**: {escape_markdown(before)}.")
    dropped = result.pick_dropped
    if dropped:
        lines.append(f"**The pick dropped**: success within {budget} tokens {dropped.baseline:.3f} -> {dropped.now:.3f} "
                     f"(+{dropped.wins}/-{dropped.losses} needles, adjusted p = {dropped.p_adjusted:.2g}).")
    if result.removed:
        lines.append(f"**The docs lost the answer of {len(result.removed)} needle{'s' if len(result.removed) != 1 else ''}"
                     f"** (the sentence is gone): {escape_markdown(_names([c['needle_id'] for c in result.removed]))}.")
    lines += ["", markdown_table([
        ("configuration", lambda c: escape_markdown(name_of(c.configuration))
         + (" (the pick)" if c.configuration == base.pick else "")),
        (f"baseline S@{budget}t", lambda c: f"{c.baseline:.3f}"), ("this run", lambda c: f"{c.now:.3f}"),
        ("needles +/-", lambda c: f"+{c.wins}/-{c.losses} of {c.needles}"),
        ("adjusted p", lambda c: f"{c.p_adjusted:.2g}"),
        ("", lambda c: "**significant drop**" if c.drop else "")], result.compared)]
    if result.flipped.get("lost") or result.flipped.get("gained"):
        lines += ["", "### Needles that flipped (the baseline's pick)"]
        lines += [f"- {which}: {_names(needles)}" for which, needles in result.flipped.items() if needles]
    if result.lost:
        lines += ["", "### Needles this corpus lost (left out)"]
        lines += [f"- {escape_markdown(c['needle_id'])}: {escape_markdown(c['reason'])}"
                  + (f"; successor offered: {escape_markdown(c['successor'])}" if c["successor"] else "")
                  for c in result.lost[:SHOWN]]
    other = {why: needles for why, needles in result.left_out.items() if why not in {c["status"] for c in result.lost}}
    if other:
        lines += ["", "Not compared: " + "; ".join(f"{why}: {_names(needles)}" for why, needles in other.items())]
    return "\n".join(lines) + "\n"


def junit_xml(result: GateResult) -> str:
    """The gate as JUnit XML: a test case for the pick and one per configuration compared."""
    cases = []
    pick_failure = None
    if result.pick_changed:
        pick_failure = (f"the pick changed from {name_of(result.baseline.pick) if result.baseline.pick else 'nothing'}"
                        f" to {name_of(result.pick) if result.pick else 'nothing'}")
    elif result.pick_dropped:
        d = result.pick_dropped
        pick_failure = f"the pick dropped: {d.baseline:.3f} -> {d.now:.3f}, +{d.wins}/-{d.losses}, p = {d.p_adjusted:.2g}"
    cases.append(("the pick", pick_failure))
    removed = [c["needle_id"] for c in result.removed]
    cases.append(("the answers", f"the docs lost the answer of {', '.join(removed)}" if removed else None))
    for c in result.compared:
        failure = (f"success within {result.baseline.budget} tokens fell from {c.baseline:.3f} to {c.now:.3f} "
                   f"(+{c.wins}/-{c.losses} needles, adjusted p = {c.p_adjusted:.2g})") if c.drop else None
        cases.append((name_of(c.configuration), failure))
    failures = sum(f is not None for _, f in cases)
    body = "".join(f'  <testcase classname="rag-assets gate" name={quoteattr(name)}>'
                   + (f"<failure message={quoteattr(failure)}>{escape(failure)}</failure>" if failure else "")
                   + "</testcase>\n" for name, failure in cases)
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="rag-assets gate" tests="{len(cases)}" '
            f'failures="{failures}">\n{body}</testsuite>\n')
