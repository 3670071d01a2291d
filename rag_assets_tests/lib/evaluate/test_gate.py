"""The gate's comparison on stored rows: the baseline's pick dropping significantly, the pick changing, an answer
the docs lost, each fails; flipped needles and the needles left out are named; the summary and the JUnit XML say
so; a baseline that cannot be one is refused with why."""

import xml.etree.ElementTree as ElementTree

import duckdb
import pytest

from rag_assets.lib.evaluate.gate import compare, junit_xml, read_baseline, summary_markdown
from rag_assets.lib.evaluate.measures import write_results
from rag_assets.lib.evaluate.needle_changes import write_needle_changes, write_run_needles
from rag_assets_tests.lib.evaluate.needle_rows import configuration, table

PICK = ("m", "s", "dense")
OTHER = ("m", "s", "bm25")


def stored(ranks_pick, ranks_other, pick=PICK, needles=None, changes=()):
    connection = duckdb.connect()
    run = write_results(connection, table(configuration(*PICK, ranks_pick), configuration(*OTHER, ranks_other)),
                        {"eval_hash": "h", "eval_version": "1.0"})
    connection.execute("CREATE TABLE decision AS SELECT 1024 AS budget, ? AS model, ? AS strategy, ? AS retriever",
                       list(pick))
    write_run_needles(connection, run, [(f"n{i}", "t") for i in range(len(ranks_pick))] if needles is None else needles)
    write_needle_changes(connection, run, list(changes))
    return connection, run


def gate(baseline, now, pick=PICK):
    base = read_baseline(baseline[0])
    return compare(base, now[0], now[1], pick, "snap2")


def test_an_unchanged_run_passes_with_every_configuration_compared():
    result = gate(stored([1] * 20, [2] * 20), stored([1] * 20, [2] * 20))
    assert not result.failed and [c.configuration for c in result.compared] == [OTHER, PICK]
    assert all(c.needles == 20 and (c.wins, c.losses) == (0, 0) for c in result.compared)
    assert summary_markdown(result).startswith("## rag-assets gate: pass")
    assert ElementTree.fromstring(junit_xml(result)).get("failures") == "0"


def test_a_significant_drop_of_the_pick_fails_naming_the_needles_that_flipped():
    # 8 of 20 needles lost at the budget: sign test p = 2 * 0.5^8 = 0.0078, Holm over 2 tests: 0.0156
    result = gate(stored([1] * 20, [1] * 20), stored([None] * 8 + [1] * 12, [1] * 20))
    dropped = result.pick_dropped
    assert result.failed and dropped and (dropped.wins, dropped.losses) == (0, 8)
    assert abs(dropped.p_adjusted - 2 * 2 * 0.5 ** 8) < 1e-12 and (dropped.baseline, dropped.now) == (1.0, 0.6)
    assert result.flipped == {"lost": [f"n{i}" for i in (0, 1, 2, 3, 4, 5, 6, 7)], "gained": []}
    summary = summary_markdown(result)
    assert "**The pick dropped**: success within 1024 tokens 1.000 -> 0.600 (+0/-8 needles" in summary
    assert "- lost: n0, n1, n2, n3, n4, n5, n6, n7" in summary and "**significant drop**" in summary
    suite = ElementTree.fromstring(junit_xml(result))
    assert suite.get("failures") == "2"  # the pick, and its configuration's own case
    assert suite.find("testcase[@name='the pick']/failure").get("message").startswith("the pick dropped")


def test_a_small_drop_passes_and_a_drop_elsewhere_is_shown_without_failing():
    small = gate(stored([1] * 20, [1] * 20), stored([None] * 2 + [1] * 18, [1] * 20))
    assert not small.failed and small.flipped["lost"] == ["n0", "n1"]
    elsewhere = gate(stored([1] * 20, [1] * 20), stored([1] * 20, [None] * 9 + [1] * 11))
    assert not elsewhere.failed and [c.configuration for c in elsewhere.compared if c.drop] == [OTHER]


def test_a_changed_pick_fails():
    result = gate(stored([1] * 20, [1] * 20), stored([1] * 20, [1] * 20, pick=OTHER), pick=OTHER)
    assert result.failed and result.pick_changed
    assert "**The pick changed** from m: s x dense to m: s x bm25." in summary_markdown(result)


def test_lost_answers_fail_and_edited_needles_are_left_out_without_failing():
    changes = [{"needle_id": "n18", "status": "removed", "reason": "removed: no sentence of the snapshot is like it"},
               {"needle_id": "n19", "status": "edited", "reason": "edited (0.93 alike)", "successor": "New text."}]
    needles = [(f"n{i}", "t") for i in range(18)]
    now = stored([1] * 18, [1] * 18, needles=needles, changes=changes)
    result = gate(stored([1] * 20, [1] * 20), now)
    assert [c["needle_id"] for c in result.removed] == ["n18"] and result.failed
    assert result.left_out == {"removed": ["n18"], "edited": ["n19"]} and result.compared[0].needles == 18
    summary = summary_markdown(result)
    assert "**The docs lost the answer of 1 needle** (the sentence is gone): n18." in summary
    assert r"- n19: edited \(0.93 alike\); successor offered: New text." in summary  # escaped Markdown
    edited_only = gate(stored([1] * 20, [1] * 20), stored([1] * 19, [1] * 19, needles=[(f"n{i}", "t") for i in
                                                                                       range(19)], changes=changes[1:]))
    assert not edited_only.failed


def test_a_needle_whose_text_changed_is_not_compared():
    now = stored([None] + [1] * 19, [1] * 20, needles=[("n0", "other text")] + [(f"n{i}", "t") for i in range(1, 20)])
    result = gate(stored([1] * 20, [1] * 20), now)
    assert result.left_out == {"changed": ["n0"]} and all(c.needles == 19 for c in result.compared)
    assert result.flipped["lost"] == []


def test_what_cannot_be_a_baseline_is_refused_with_why():
    empty = duckdb.connect()
    write_results(empty, table(configuration(*PICK, [1])), {"eval_hash": "h"})
    with pytest.raises(duckdb.Error):  # no decision table at all: the caller names the file
        read_baseline(empty)
    connection, first = stored([1] * 5, [1] * 5)
    with pytest.raises(ValueError, match="holds no evaluation run 'zz'"):
        read_baseline(connection, "zz")
    write_results(connection, table(configuration(*PICK, [1] * 5)), {"eval_hash": "h"})
    with pytest.raises(ValueError, match=f"run {first} is not its newest run"):
        read_baseline(connection, first[:6])
    blank = duckdb.connect()
    blank.execute("CREATE TABLE evaluation_runs (run_id VARCHAR, created_at TIMESTAMP, snapshot_id VARCHAR, "
                  "eval_version VARCHAR)")
    with pytest.raises(ValueError, match="holds no evaluation run"):
        read_baseline(blank)
