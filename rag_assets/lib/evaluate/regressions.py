"""The regression alarm: each configuration's newest evaluation run against the run before it, on the
same needles, with the paired tests (sign test on success@k and at each context budget, Wilcoxon on the
reciprocal rank), each needle's value its mean over its phrasings.

A configuration is (model, strategy, retriever); the weights revision may differ between the two
runs (that is the change most worth catching). The alarm's tests are one family, adjusted by Holm: a drop
is significant when the newer run loses more needles than it wins and the adjusted p < ``ALPHA``. When the
two runs kept the needles they asked (``run_needles``), they are compared on the needles present and unchanged
in both, and the others are named with why (``needle_changes.left_out_between``: a successor accepted, lost by an
edit, dropped, new). Runs from before that are compared only when their needle file is the same (its hash).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from rag_assets.lib.evalsets.relocation import file_hash
from rag_assets.lib.evaluate import catalog
from rag_assets.lib.evaluate.measures import budgets_of
from rag_assets.lib.evaluate.multiplicity import adjust
from rag_assets.lib.evaluate.needle_changes import changes_of_run, left_out_between, needles_of_run
from rag_assets.lib.evaluate.paired_tests import paired_test

ALPHA = 0.05
CONFIGURATION = ("model", "strategy", "retriever")


def watched(budgets: tuple[int, ...] = ()) -> list[catalog.Measure]:
    """The measures the alarm watches (``Measure.alarm``: success@k, success at each budget, MRR)."""
    return [measure for measure in catalog.measures(budgets) if measure.alarm]


@dataclass(frozen=True)
class Drop:
    model: str
    strategy: str
    retriever: str
    measure: str
    newer: float
    older: float
    wins: int
    losses: int
    p_value: float
    queries_lost: tuple[str, ...]

    def describe(self) -> str:
        lost = ", ".join(self.queries_lost[:10]) + (" ..." if len(self.queries_lost) > 10 else "")
        return (f"{self.model} x {self.strategy} x {self.retriever}: {self.measure} fell from {self.older:.3f} to "
                f"{self.newer:.3f} (+{self.wins}/-{self.losses} needles, adjusted p = {self.p_value:.2g}); lost: {lost}")


@dataclass
class RegressionReport:
    newer_run: str | None = None
    older_run: str | None = None
    evaluation_set_changed: bool = False
    configurations: int = 0  # compared
    left_out: dict[str, list[str]] = field(default_factory=dict)  # needles not compared, by why (``left_out_between``)
    drops: list[Drop] = field(default_factory=list)

    def summary(self) -> str:
        if self.older_run is None:
            return "one evaluation run so far: nothing to compare with"
        if self.evaluation_set_changed:
            return (f"the evaluation set changed between runs {self.older_run} and {self.newer_run} (another hash): "
                    "not compared")
        count = sum(len(needles) for needles in self.left_out.values())
        left_out = (f"; {count} needle{'s' if count != 1 else ''} not compared, not present and unchanged in both runs ("
                    + "; ".join(f"{why}: {', '.join(needles[:10])}{' ...' if len(needles) > 10 else ''}"
                                for why, needles in self.left_out.items()) + ")") if count else ""
        if self.drops:
            return "\n".join(drop.describe() for drop in self.drops) + left_out
        return (f"no significant drop in {self.configurations} configurations ({self.older_run} -> {self.newer_run})"
                + left_out)


def per_needle(connection: duckdb.DuckDBPyConnection, run_id: str, alarms: list[catalog.Measure]
                ) -> dict[tuple, dict[str, dict[str, float]]]:
    """{configuration: {needle: {measure: mean over its phrasings}}} of one run's judged queries (a miss
    counts 0; a measure the run has no value for is left out)."""
    values = ", ".join(f"avg({measure.per_query}) AS {measure.name}" for measure in alarms)
    rows = connection.execute(
        f"SELECT {', '.join(CONFIGURATION)}, {catalog.UNIT} AS unit, {values} "
        f"FROM retrieval_results WHERE run_id = ? AND query_kind <> 'out_of_domain' GROUP BY ALL", [run_id]).fetchall()
    measures: dict[tuple, dict[str, dict[str, float]]] = {}
    for row in rows:
        configuration, needle, values = row[:3], row[3], row[4:]
        measures.setdefault(configuration, {})[needle] = {
            m.name: value for m, value in zip(alarms, values) if value is not None}
    return measures


def latest_regressions(connection: duckdb.DuckDBPyConnection, alpha: float = ALPHA) -> RegressionReport:
    runs = connection.sql("SELECT run_id, eval_hash FROM evaluation_runs ORDER BY created_at DESC, run_id LIMIT 2"
                          ).fetchall()
    report = RegressionReport(newer_run=runs[0][0] if runs else None)
    if len(runs) < 2:
        return report
    (newer, newer_hash), (older, older_hash) = runs
    report.older_run = older
    newer_needles, older_needles = needles_of_run(connection, newer), needles_of_run(connection, older)
    if (newer_needles is None or older_needles is None) and file_hash(newer_hash) != file_hash(older_hash):
        report.evaluation_set_changed = True  # runs from before needles were kept per run: nothing to pair on
        return report
    alarms = watched(budgets_of(connection))
    new, old = per_needle(connection, newer, alarms), per_needle(connection, older, alarms)
    if newer_needles is not None and older_needles is not None:
        report.left_out = left_out_between(older_needles, newer_needles, changes_of_run(connection, newer))
        unchanged = {n for n, text in older_needles.items() if newer_needles.get(n) == text}
        new = {c: {n: v for n, v in by.items() if n in unchanged} for c, by in new.items()}
    else:
        only_one = sorted({n for by in new.values() for n in by} ^ {n for by in old.values() for n in by})
        report.left_out = {"asked by one run only": only_one} if only_one else {}
    tested = []
    for configuration in sorted(set(new) & set(old)):
        needles = sorted(set(new[configuration]) & set(old[configuration]))
        if not needles:
            continue
        report.configurations += 1
        for alarm in alarms:
            measure = alarm.name
            both = [n for n in needles if measure in new[configuration][n] and measure in old[configuration][n]]
            if not both:  # a budget the older run had no token counts for
                continue
            a = [new[configuration][n][measure] for n in both]
            b = [old[configuration][n][measure] for n in both]
            tested.append((configuration, measure, both, a, b, paired_test(alarm, a, b)))
    adjusted = adjust([result.p_value for *_, result in tested])
    for (configuration, measure, needles, a, b, result), p in zip(tested, adjusted):
        if result.losses > result.wins and p < alpha:
            lost = tuple(n for n, x, y in zip(needles, a, b) if x < y)
            report.drops.append(Drop(*configuration, measure, sum(a) / len(a), sum(b) / len(b), result.wins,
                                     result.losses, p, lost))
    return report
