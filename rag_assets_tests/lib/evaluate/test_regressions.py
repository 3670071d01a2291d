import duckdb
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute

from rag_assets.lib.evaluate.measures import write_results
from rag_assets.lib.evaluate.regressions import latest_regressions

SCHEMA = pa.schema([("query_id", pa.string()), ("query_kind", pa.string()), ("hit_rank", pa.int64()),
                    ("relevant_ranks", pa.list_(pa.int64())), ("relevant_total", pa.int64()), ("phrasing", pa.string()),
                    ("retriever", pa.string()), ("model", pa.string()), ("revision", pa.string()),
                    ("strategy", pa.string()), ("latency_ms", pa.float64())])


def _run(ranks: list[int | None], revision: str = "r1", retriever: str = "dense") -> pa.Table:
    return pa.Table.from_pylist([
        {"query_id": f"q{i}", "query_kind": "needle", "hit_rank": rank, "relevant_ranks": [rank] if rank else [],
         "relevant_total": 1, "phrasing": "doc", "retriever": retriever, "model": "m", "revision": revision,
         "strategy": "s", "latency_ms": 1.0} for i, rank in enumerate(ranks)], schema=SCHEMA)


def test_equal_runs_pass_and_the_first_run_has_nothing_to_compare():
    connection = duckdb.connect()
    write_results(connection, _run([1, 2, None] * 10), {"eval_hash": "h"})
    first = latest_regressions(connection)
    assert first.older_run is None and not first.drops and "nothing to compare" in first.summary()
    write_results(connection, _run([1, 2, None] * 10), {"eval_hash": "h"})
    report = latest_regressions(connection)
    assert report.configurations == 1 and report.drops == []
    assert "no significant drop in 1 configurations" in report.summary()


def test_a_significant_drop_fails_naming_configuration_measure_and_lost_queries():
    # 12 of 30 queries lose their rank-1 hit (misses now): +0/-12 at success@1, p = 2 * 0.5^12 = 0.00049, and
    # the same at success@4, @8, @20 and for the reciprocal rank (Wilcoxon's exact p of 12 equal drops): Holm
    # over the alarm's five tests makes each 5 x 0.00049 = 0.0024
    connection = duckdb.connect()
    write_results(connection, _run([1] * 30), {"eval_hash": "h"})
    write_results(connection, _run([None] * 12 + [1] * 18, revision="r2"), {"eval_hash": "h"})
    report = latest_regressions(connection)
    drops = {drop.measure: drop for drop in report.drops}
    assert set(drops) == {"success_at_1", "success_at_4", "success_at_8", "success_at_20", "mrr"}
    drop = drops["success_at_1"]
    assert (drop.model, drop.strategy, drop.retriever) == ("m", "s", "dense")
    assert (drop.wins, drop.losses) == (0, 12) and abs(drop.p_value - 5 * 2 * 0.5 ** 12) < 1e-12
    assert drop.queries_lost == tuple(sorted(f"q{i}" for i in range(12)))
    assert (drop.older, drop.newer) == (1.0, 0.6)
    assert "m x s x dense: success_at_1 fell from 1.000 to 0.600 (+0/-12 needles, adjusted p = 0.0024); lost: q0, q1" in report.summary()


def test_a_small_drop_is_not_an_alarm_and_a_gain_never_is():
    connection = duckdb.connect()
    write_results(connection, _run([1] * 30), {"eval_hash": "h"})
    write_results(connection, _run([None] * 2 + [1] * 28), {"eval_hash": "h"})  # +0/-2: p = 0.5
    assert latest_regressions(connection).drops == []
    write_results(connection, _run([1] * 30), {"eval_hash": "h"})  # back up: a gain
    assert latest_regressions(connection).drops == []


def test_a_changed_evaluation_set_warns_instead_of_comparing():
    connection = duckdb.connect()
    write_results(connection, _run([1] * 30), {"eval_hash": "h1"})
    write_results(connection, _run([None] * 30), {"eval_hash": "h2"})
    report = latest_regressions(connection)
    assert report.evaluation_set_changed and report.drops == [] and report.configurations == 0
    assert "the evaluation set changed" in report.summary()


def test_after_a_corpus_edit_lost_needles_the_runs_are_compared_on_the_needles_both_asked():
    connection = duckdb.connect()
    write_results(connection, _run([1] * 30), {"eval_hash": "h"})
    newer = _run([1, 1] + [None] * 12 + [1] * 16, revision="r2")
    # the edit lost q0 and q1: the newer run (the set's file unchanged, the relocation's outcome after the dot)
    # did not ask them
    write_results(connection, newer.filter(pa.compute.is_in(newer["query_id"], pa.array(
        [f"q{i}" for i in range(2, 30)]))), {"eval_hash": "h.5e1f0c2a"})
    report = latest_regressions(connection)
    assert not report.evaluation_set_changed and report.left_out == {"asked by one run only": ["q0", "q1"]}
    drop = next(d for d in report.drops if d.measure == "success_at_1")
    assert (drop.wins, drop.losses, drop.older) == (0, 12, 1.0)  # over the 28 needles both asked
    assert report.summary().endswith("2 needles not compared, not present and unchanged in both runs (asked by one "
                                      "run only: q0, q1)")
    write_results(connection, _run([1] * 30), {"eval_hash": "h2.5e1f0c2a"})  # another needle file: not compared
    assert latest_regressions(connection).evaluation_set_changed


def test_runs_that_kept_their_needles_are_compared_on_those_unchanged_and_say_why_the_others_are_not():
    from rag_assets.lib.evaluate.needle_changes import write_needle_changes, write_run_needles

    connection = duckdb.connect()
    older = write_results(connection, _run([1] * 30), {"eval_hash": "h1"})
    texts = {f"q{i}": f"t{i}" for i in range(30)}
    write_run_needles(connection, older, list(texts.items()))
    # the newer run: a person accepted q0's successor (another text), the edit lost q1, q2 was dropped from the
    # file and q30 is new; q3..q14 lose their hit; another needle file hash, yet comparable needle by needle
    newer_rows = _run([1, 1, 1] + [None] * 12 + [1] * 15 + [1], revision="r2")
    newer_rows = newer_rows.filter(pa.compute.is_in(newer_rows["query_id"], pa.array(
        ["q0"] + [f"q{i}" for i in range(3, 31)])))
    newer = write_results(connection, newer_rows, {"eval_hash": "h2"})
    write_run_needles(connection, newer, [("q0", "changed text")] + [(f"q{i}", texts.get(f"q{i}", "new"))
                                                                     for i in range(3, 31)])
    write_needle_changes(connection, newer, [{"needle_id": "q1", "status": "edited"}])
    report = latest_regressions(connection)
    assert not report.evaluation_set_changed
    assert report.left_out == {"changed": ["q0"], "edited": ["q1"], "dropped": ["q2"], "new": ["q30"]}
    drop = next(d for d in report.drops if d.measure == "success_at_1")
    assert (drop.wins, drop.losses) == (0, 12) and drop.older == 1.0 and abs(drop.newer - 15 / 27) < 1e-12
    assert "4 needles not compared" in report.summary() and "changed: q0; edited: q1; dropped: q2; new: q30" in \
        report.summary()
