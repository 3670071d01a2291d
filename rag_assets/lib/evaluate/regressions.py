"""The regression alarm: each configuration's newest evaluation run against the run before it, on the
same queries, with the paired tests (sign test on success@k, Wilcoxon on the reciprocal rank).

A configuration is (model, strategy, retriever); the weights revision may differ between the two
runs (that is the change most worth catching). A drop is significant when the newer run loses more
queries than it wins and p < ``ALPHA``. When the evaluation set changed between the runs (another
hash) nothing is compared: the runs answered different questions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from rag_assets.lib.evaluate import catalog
from rag_assets.lib.evaluate.paired_tests import paired_test

ALPHA = 0.05
CONFIGURATION = ("model", "strategy", "retriever")


def watched() -> list[catalog.Measure]:
    """The measures the alarm watches (``Measure.alarm``: success@k and MRR)."""
    return [measure for measure in catalog.MEASURES if measure.alarm]


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
                f"{self.newer:.3f} (+{self.wins}/-{self.losses}, p = {self.p_value:.2g}); lost: {lost}")


@dataclass
class RegressionReport:
    newer_run: str | None = None
    older_run: str | None = None
    evaluation_set_changed: bool = False
    configurations: int = 0  # compared
    drops: list[Drop] = field(default_factory=list)

    def summary(self) -> str:
        if self.older_run is None:
            return "one evaluation run so far: nothing to compare with"
        if self.evaluation_set_changed:
            return (f"the evaluation set changed between runs {self.older_run} and {self.newer_run} (another hash): "
                    "not compared")
        if self.drops:
            return "\n".join(drop.describe() for drop in self.drops)
        return f"no significant drop in {self.configurations} configurations ({self.older_run} -> {self.newer_run})"


def _per_query(connection: duckdb.DuckDBPyConnection, run_id: str) -> dict[tuple, dict[str, dict[str, float]]]:
    """{configuration: {query id: {measure: value}}} of one run's judged queries (a miss counts 0)."""
    values = ", ".join(f"{measure.per_query} AS {measure.name}" for measure in watched())
    rows = connection.execute(
        f"SELECT {', '.join(CONFIGURATION)}, query_id, {values} "
        "FROM retrieval_results WHERE run_id = ? AND query_kind <> 'out_of_domain'", [run_id]).fetchall()
    measures: dict[tuple, dict[str, dict[str, float]]] = {}
    for row in rows:
        configuration, query, values = row[:3], row[3], row[4:]
        measures.setdefault(configuration, {})[query] = dict(zip((m.name for m in watched()), values))
    return measures


def latest_regressions(connection: duckdb.DuckDBPyConnection, alpha: float = ALPHA) -> RegressionReport:
    runs = connection.sql("SELECT run_id, eval_hash FROM evaluation_runs ORDER BY created_at DESC, run_id LIMIT 2"
                          ).fetchall()
    report = RegressionReport(newer_run=runs[0][0] if runs else None)
    if len(runs) < 2:
        return report
    (newer, newer_hash), (older, older_hash) = runs
    report.older_run = older
    if newer_hash != older_hash:
        report.evaluation_set_changed = True
        return report
    new, old = _per_query(connection, newer), _per_query(connection, older)
    for configuration in sorted(set(new) & set(old)):
        queries = sorted(set(new[configuration]) & set(old[configuration]))
        if not queries:
            continue
        report.configurations += 1
        for alarm in watched():
            measure = alarm.name
            a = [new[configuration][q][measure] for q in queries]
            b = [old[configuration][q][measure] for q in queries]
            result = paired_test(alarm, a, b)
            if result.losses > result.wins and result.p_value < alpha:
                lost = tuple(q for q, x, y in zip(queries, a, b) if x < y)
                report.drops.append(Drop(*configuration, measure, sum(a) / len(a), sum(b) / len(b), result.wins,
                                         result.losses, result.p_value, lost))
    return report
