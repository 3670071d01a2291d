import pytest

from rag_assets.lib.evaluate.intervals import wilson_interval
from rag_assets.lib.evaluate.refusal import (
    COUNTS,
    CUTS,
    SEPARATION_FIELDS,
    K,
    auroc,
    best_distances,
    calibrate,
    gate,
    separation,
    suggest_cut,
    sweep,
)


def query(retriever, query_id, query_kind, kind, distances, relevant_ranks=()):
    return {"query_id": query_id, "query_kind": query_kind, "kind": kind, "phrasing": "direct",
            "retriever": retriever, "distances": distances, "relevant_ranks": list(relevant_ranks)}


def dense_rows():
    """Three in-domain and three out-of-domain queries, each needle found, two never keepable together."""
    return [
        query("dense", "q1", "needle", "prose", [0.40, 0.50, 0.60, 0.70, 0.80], [1]),    # needle at 0.40
        query("dense", "q2", "needle", "code", [0.45, 0.55, 0.62, 0.66, 0.68], [3]),     # needle kept once cut > 0.62
        query("dense", "q3", "document", None, [0.50, 0.52, 0.54, 0.56, 0.58], [5]),     # rank 5: never kept (k = 4)
        query("dense", "o1", "out_of_domain", "near", [0.58, 0.60, 0.70, 0.80, 0.90]),
        query("dense", "o2", "out_of_domain", "near", [0.64, 0.70, 0.75, 0.80, 0.85]),
        query("dense", "o3", "out_of_domain", "off_topic", [0.75, 0.80, 0.85, 0.90, 0.95]),
    ]


def late_rows():
    """A separable retriever: every needle (worst 0.42) closer than every out-of-domain query (best 0.55)."""
    return [
        query("late_interaction", "q1", "needle", "prose", [0.30, 0.50, 0.60, 0.70], [1]),
        query("late_interaction", "q2", "needle", "code", [0.35, 0.45, 0.60, 0.70], [1, 4]),
        query("late_interaction", "q3", "document", None, [0.38, 0.42, 0.60, 0.70], [2]),
        query("late_interaction", "o1", "out_of_domain", "near", [0.55, 0.60, 0.70, 0.80]),
        query("late_interaction", "o2", "out_of_domain", "near", [0.60, 0.70, 0.75, 0.80]),
        query("late_interaction", "o3", "out_of_domain", "off_topic", [0.70, 0.80, 0.85, 0.90]),
    ]


def bm25_rows():
    """No distance scale: never calibrated."""
    return [query("bm25", "q1", "needle", "prose", None, [1]), query("bm25", "o1", "out_of_domain", "near", None)]


def counts(row):
    return {name: row[name] for name in COUNTS}


def test_the_cut_grid():
    assert len(CUTS) == 141 and CUTS[0] == 0.30 and CUTS[-1] == 1.0 and CUTS[1] == 0.305
    assert K == 4


def test_gate_keeps_the_first_k_strictly_closer_than_the_cut():
    assert gate([0.30, 0.40, 0.50, 0.60, 0.20], 0.55) == [0, 1, 2]
    assert gate([0.30, 0.40, 0.50, 0.60, 0.20], 0.99) == [0, 1, 2, 3]  # the fifth is beyond k
    assert gate([0.30, 0.40, 0.50], 0.55, k=2) == [0, 1]
    assert gate([0.50, 0.60], 0.50) == []  # strictly below
    assert gate([], 0.9) == []


def test_sweep_counts_by_hand():
    rows = sweep(dense_rows() + bm25_rows(), cuts=[0.45, 0.60, 0.65])
    assert [(r["retriever"], r["cut"]) for r in rows] == [("dense", 0.45), ("dense", 0.60), ("dense", 0.65)]
    base = {"in_domain": 3, "out_of_domain": 3, "near": 2, "off_topic": 1}
    # 0.45: q1 keeps [0] (its needle); q2 (0.45 is not < 0.45) and q3 refused; every out-of-domain refused.
    assert counts(rows[0]) == base | {"answered_with_needle": 1, "answered_without_needle": 0, "in_domain_refused": 2,
                                      "bluffs": 0, "bluffs_near": 0, "bluffs_off_topic": 0, "out_of_domain_refused": 3}
    # 0.60: q1 with needle; q2 keeps [0, 1], needle at position 2 (0.62) not kept; q3 keeps [0..3], needle at
    # rank 5; o1 (0.58) bluffs, o2 (0.64) and o3 (0.75) refused.
    assert counts(rows[1]) == base | {"answered_with_needle": 1, "answered_without_needle": 2, "in_domain_refused": 0,
                                      "bluffs": 1, "bluffs_near": 1, "bluffs_off_topic": 0, "out_of_domain_refused": 2}
    # 0.65: q2 now keeps its needle (0.62); q3 still can't; o2 (0.64) bluffs too; o3 refused.
    assert counts(rows[2]) == base | {"answered_with_needle": 2, "answered_without_needle": 1, "in_domain_refused": 0,
                                      "bluffs": 2, "bluffs_near": 2, "bluffs_off_topic": 0, "out_of_domain_refused": 1}


def test_sweep_covers_every_retriever_and_cut():
    rows = sweep(dense_rows() + late_rows() + bm25_rows())
    assert len(rows) == 2 * 141
    assert sorted({r["retriever"] for r in rows}) == ["dense", "late_interaction"]
    last = rows[-1]  # late_interaction at 1.0: everything answered
    assert (last["cut"], last["answered_with_needle"], last["bluffs"], last["bluffs_off_topic"]) == (1.0, 3, 3, 1)


def sweep_row(cut, answered, bluffs, in_domain=10, out_of_domain=5):
    """A sweep row for suggest_cut: ``answered`` with the needle, the rest refused."""
    return {"retriever": "dense", "cut": cut, "in_domain": in_domain, "out_of_domain": out_of_domain,
            "near": out_of_domain, "off_topic": 0, "answered_with_needle": answered, "answered_without_needle": 0,
            "in_domain_refused": in_domain - answered, "bluffs": bluffs, "bluffs_near": bluffs, "bluffs_off_topic": 0,
            "out_of_domain_refused": out_of_domain - bluffs}


def test_suggest_cut_takes_the_fewest_bluffs_among_cuts_answering_ninety_percent():
    rows = [sweep_row(0.50, 8, 0), sweep_row(0.60, 9, 1), sweep_row(0.70, 10, 3)]
    chosen = suggest_cut(rows)
    # 0.50 answers 80 %; 0.60 and 0.70 reach 90 %, 0.60 with 1 bluff against 3.
    assert (chosen["cut"], chosen["bluffs"], chosen["reached"]) == (0.60, 1, True)
    assert chosen["answered"] == 0.9 and chosen["bluff"] == 0.2 and chosen["refused"] == 0.1
    assert (chosen["answered_low"], chosen["answered_high"]) == wilson_interval(9, 10)
    assert chosen["answered_low"] == pytest.approx(0.5958, abs=1e-4)
    assert chosen["answered_high"] == pytest.approx(0.9821, abs=1e-4)
    assert (chosen["bluff_low"], chosen["bluff_high"]) == wilson_interval(1, 5)
    assert "90%" in chosen["rule"] and "fewest bluffs" in chosen["rule"] and "answerable" in chosen["rule"]
    assert suggest_cut(rows, min_answered=1.0)["cut"] == 0.70


def test_suggest_cut_breaks_ties_toward_the_smaller_cut():
    rows = [sweep_row(0.70, 10, 3), sweep_row(0.65, 9, 1), sweep_row(0.60, 9, 1), sweep_row(0.55, 8, 0)]
    assert suggest_cut(rows)["cut"] == 0.60


def test_ninety_percent_is_of_the_answerable_queries():
    # the retriever's top k holds only 7 of 10 needles: 7 are answerable, and 90 % of them is 6.3, so the
    # cuts keeping all 7 qualify (0.60, 0.65, 0.70); the fewest bluffs (2) at 0.60 and 0.65: 0.60.
    rows = [sweep_row(0.80, 6, 4), sweep_row(0.70, 7, 3), sweep_row(0.65, 7, 2), sweep_row(0.60, 7, 2),
            sweep_row(0.50, 5, 0)]
    chosen = suggest_cut(rows)
    assert (chosen["cut"], chosen["answered_with_needle"], chosen["bluffs"], chosen["reached"]) == (0.60, 7, 2, True)
    # with 6.3 needed, a cut keeping 6 does not qualify however few its bluffs
    assert suggest_cut([sweep_row(0.55, 6, 0), sweep_row(0.60, 7, 2)])["cut"] == 0.60
    assert chosen["answered_low"] == pytest.approx(0.3968, abs=1e-4)
    assert chosen["answered_high"] == pytest.approx(0.8922, abs=1e-4)


def test_suggest_cut_guards_empty_denominators():
    chosen = suggest_cut([sweep_row(0.5, 0, 0, in_domain=0, out_of_domain=0)])
    assert chosen["reached"] is False
    assert (chosen["answered"], chosen["answered_low"], chosen["answered_high"]) == (0.0, 0.0, 1.0)
    assert (chosen["bluff"], chosen["bluff_low"], chosen["bluff_high"]) == (0.0, 0.0, 1.0)
    with pytest.raises(ValueError):
        suggest_cut([])


def brute_force_auroc(inside, outside):
    """P(out > in) + P(tie) / 2 over every pair."""
    total = 0.0
    for o in outside:
        for i in inside:
            total += 1.0 if o > i else 0.5 if o == i else 0.0
    return total / (len(inside) * len(outside))


def test_auroc_is_the_mann_whitney_auc_with_ties_as_half():
    inside = [0.30, 0.50, 0.50, 0.70, 0.45, 0.62]
    outside = [0.50, 0.60, 0.40, 0.90, 0.70]
    value, low, high = auroc(inside, outside)
    # 30 pairs: out 0.50 beats 2 and ties 2 (3.0); 0.60 beats 4 (4); 0.40 beats 1 (1); 0.90 beats 6 (6);
    # 0.70 beats 5 and ties 1 (5.5): 19.5 / 30
    assert value == pytest.approx(19.5 / 30)
    assert value == pytest.approx(brute_force_auroc(inside, outside))
    from sklearn.metrics import roc_auc_score  # the test extra's: absent, this test fails rather than skip the check

    assert value == pytest.approx(roc_auc_score([0] * len(inside) + [1] * len(outside), inside + outside))
    assert 0.0 <= low < value < high <= 1.0
    assert auroc(inside, outside) == (value, low, high)  # seeded: reproducible


def test_auroc_extremes_and_empty_sides():
    assert auroc([0.30, 0.40, 0.45], [0.50, 0.60]) == (1.0, 1.0, 1.0)
    assert auroc([0.50, 0.60], [0.30, 0.40, 0.45]) == (0.0, 0.0, 0.0)
    assert auroc([0.5, 0.5], [0.5]) == (0.5, 0.5, 0.5)
    assert auroc([], [0.5]) == (None, None, None)


def test_separation_on_the_fixtures():
    found = separation(dense_rows() + late_rows() + bm25_rows())
    assert sorted(found) == ["dense", "late_interaction"]
    dense = found["dense"]
    # needles at 0.40, 0.62 and (rank 5) 0.58: worst 0.62; out-of-domain best 0.58: not separable, though the
    # best distances themselves (0.40, 0.45, 0.50 against 0.58, 0.64, 0.75) are.
    assert (dense["worst_in_domain"], dense["best_out_of_domain"], dense["separable"]) == (0.62, 0.58, False)
    assert (dense["auroc"], dense["auroc_low"], dense["auroc_high"]) == (1.0, 1.0, 1.0)
    assert (dense["in_domain"], dense["out_of_domain"]) == (3, 3)
    late = found["late_interaction"]
    assert (late["worst_in_domain"], late["best_out_of_domain"], late["separable"]) == (0.42, 0.55, True)
    assert set(late) == set(SEPARATION_FIELDS)


def test_separation_ignores_misses_and_counts_every_query():
    rows = dense_rows() + [query("dense", "q4", "needle", "prose", [0.90, 0.95])]  # a miss: no needle distance
    dense = separation(rows)["dense"]
    assert (dense["worst_in_domain"], dense["in_domain"]) == (0.62, 4)
    # the miss's best distance 0.90 beats all three out-of-domain ones: 9 + 0 of 12 pairs
    assert dense["auroc"] == pytest.approx(9 / 12)


def test_best_distances():
    assert best_distances(dense_rows() + bm25_rows(), "dense") == ([0.40, 0.45, 0.50], [0.58, 0.64, 0.75])
    assert best_distances(bm25_rows(), "bm25") == ([], [])


def test_calibrate_marks_one_suggested_cut_per_retriever():
    swept, suggestions = calibrate(dense_rows() + late_rows() + bm25_rows())
    assert len(swept) == 2 * 141
    assert len({frozenset(row) for row in swept}) == 1
    assert set(swept[0]) == {"retriever", "cut", *COUNTS, *SEPARATION_FIELDS, "suggested"}
    marked = [(row["retriever"], row["cut"]) for row in swept if row["suggested"]]
    # dense: q3's needle is never kept, so 3 of 3 is out of reach; 2 answered from 0.625 (q2's needle at 0.62),
    # with o1 (0.58) bluffing there and o2 (0.64) from 0.645. late_interaction: 3 of 3 from 0.425 (needle at
    # 0.42), no bluff below 0.55.
    assert marked == [("dense", 0.625), ("late_interaction", 0.425)]
    assert [(s["retriever"], s["cut"], s["reached"], s["bluffs"]) for s in suggestions] == [
        ("dense", 0.625, True, 1), ("late_interaction", 0.425, True, 0)]
    assert suggestions[1]["separable"] is True and suggestions[0]["worst_in_domain"] == 0.62


def test_the_auroc_interval_is_the_2_5_and_97_5_percentiles_of_the_seeded_bootstrap():
    """Recomputed here: the same seeded draws (in-domain indices first), each resample's AUC by brute force
    over its pairs, and the percentiles by hand (numpy's linear interpolation between order statistics)."""
    import numpy as np

    from rag_assets.lib.evaluate.refusal import BOOTSTRAP_RESAMPLES

    inside = [0.30, 0.50, 0.50, 0.70, 0.45, 0.62]
    outside = [0.50, 0.60, 0.40, 0.90, 0.70]
    rng = np.random.default_rng(seed=0)
    picks_in = rng.integers(0, len(inside), size=(BOOTSTRAP_RESAMPLES, len(inside)))
    picks_out = rng.integers(0, len(outside), size=(BOOTSTRAP_RESAMPLES, len(outside)))
    resampled = sorted(brute_force_auroc([inside[i] for i in row_in], [outside[o] for o in row_out])
                       for row_in, row_out in zip(picks_in, picks_out))

    def percentile(q: float) -> float:
        position = q / 100 * (len(resampled) - 1)
        below = int(position)
        return resampled[below] + (position - below) * (resampled[below + 1] - resampled[below])

    value, low, high = auroc(inside, outside)
    assert (low, high) == pytest.approx((percentile(2.5), percentile(97.5)), abs=1e-12)
    assert 0 < low < 0.45 and 0.85 < high < 1  # a wide interval of 11 queries, not clipped


def test_the_bootstrap_is_seeded_with_zero():
    """On 60 queries of distinct distances the bootstrap's percentiles depend on its draws: seed 0's."""
    import numpy as np

    from rag_assets.lib.evaluate.refusal import BOOTSTRAP_RESAMPLES, auroc_of

    spread = np.random.default_rng(7)
    inside, outside = spread.normal(0.45, 0.1, 35), spread.normal(0.6, 0.1, 25)
    rng = np.random.default_rng(seed=0)
    picks_in = rng.integers(0, len(inside), size=(BOOTSTRAP_RESAMPLES, len(inside)))
    picks_out = rng.integers(0, len(outside), size=(BOOTSTRAP_RESAMPLES, len(outside)))
    expected = np.percentile(auroc_of(inside[picks_in], outside[picks_out]), [2.5, 97.5])
    _, low, high = auroc(list(inside), list(outside))
    assert (low, high) == pytest.approx(tuple(expected), abs=1e-12)


def test_the_rule_reads_as_it_is_applied():
    from rag_assets.lib.evaluate.refusal import RULE, rule_text

    def expected(share: str) -> str:
        return (f"among the cuts that keep at least {share} of the answerable in-domain queries (those whose needle "
                "the ungated top k holds) answered with their needle, the fewest bluffs, ties to the smallest cut; "
                "when nothing is answerable, the smallest cut")

    assert RULE == expected("90%")
    assert rule_text(0.75) == expected("75%")


def test_a_gate_of_another_depth_and_another_rule_reach_the_sweep_and_the_suggestion():
    rows = dense_rows()
    # k = 1: only the first chunk is ever kept, so q2's needle (rank 3) is never answered
    at_one = {row["cut"]: row for row in sweep(rows, cuts=[0.9], k=1)}
    assert at_one[0.9]["answered_with_needle"] == 1 and at_one[0.9]["answered_without_needle"] == 2
    assert {row["cut"]: row for row in sweep(rows, cuts=[0.9])}[0.9]["answered_with_needle"] == 2
    swept, [suggestion] = calibrate(rows, cuts=[0.41, 0.625, 0.9], k=1, min_answered=0.5)
    assert [row["answered_with_needle"] for row in swept] == [1, 1, 1] and suggestion["cut"] == 0.41
    _, [strict] = calibrate(rows, cuts=[0.41, 0.625, 0.9], min_answered=1.0)
    _, [lenient] = calibrate(rows, cuts=[0.41, 0.625, 0.9], min_answered=0.5)
    assert (strict["cut"], lenient["cut"]) == (0.625, 0.41)  # the rule's share reaches the choice


def test_a_query_that_returned_nothing_is_farther_than_anything():
    from rag_assets.lib.evaluate.refusal import best_distance

    assert best_distance({"distances": []}) == float("inf")
    assert best_distance({"distances": [0.3, 0.5]}) == 0.3


def test_separation_without_a_found_needle_and_with_a_tie():
    from rag_assets.lib.evaluate.refusal import separation_of

    unfound = [query("dense", "q1", "needle", "prose", [0.4, 0.5]), query("dense", "o1", "out_of_domain", "near", [0.6])]
    assert separation_of(unfound, "dense")["worst_in_domain"] is None
    assert separation_of(unfound, "dense")["separable"] is True  # vacuously: no needle distance to compare
    tie = [query("dense", "q1", "needle", "prose", [0.5], [1]), query("dense", "o1", "out_of_domain", "near", [0.5])]
    assert separation_of(tie, "dense")["separable"] is False  # equal distances: no cut keeps one and refuses the other


def test_answerable_and_reaching_at_their_edges():
    from rag_assets.lib.evaluate.refusal import answerable, reaches

    assert answerable([]) == 0
    assert answerable([{"answered_with_needle": 0}, {"answered_with_needle": 3}]) == 3
    assert reaches({"answered_with_needle": 1}, 0.9, 1) is True  # one answerable query, answered
    assert reaches({"answered_with_needle": 0}, 0.9, 0) is False  # nothing answerable: nothing reaches
    # exactly the share reaches it, one fewer does not: 9 of 10 at 90 %, 7 of 7 at 100 %, 2 of 3 at two thirds
    # (which no float holds exactly), 55 of 100 at 55 % (0.55 x 100 is 55.00000000000001 in floats)
    from rag_assets.lib.evaluate.refusal import needed

    assert 0.55 * 100 > 55
    assert [needed(0.9, 10), needed(1.0, 7), needed(2 / 3, 3), needed(0.9, 11), needed(0.5, 1), needed(0.55, 100)] == [
        9, 7, 2, 10, 1, 55]
    assert reaches({"answered_with_needle": 9}, 0.9, 10) and not reaches({"answered_with_needle": 8}, 0.9, 10)
    assert reaches({"answered_with_needle": 2}, 2 / 3, 3) and not reaches({"answered_with_needle": 1}, 2 / 3, 3)


def test_a_share_outside_zero_to_one_is_refused():
    rows = [sweep_row(0.50, 8, 0), sweep_row(0.60, 9, 1)]
    for share in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match=rf"min_answered is a share of the answerable queries, in \(0, 1\]: "
                                             rf"not {share}"):
            suggest_cut(rows, min_answered=share)


def test_with_nothing_answerable_the_smallest_cut_with_the_fewest_bluffs():
    rows = [{"cut": cut, "answered_with_needle": 0, "bluffs": bluffs, "in_domain": 2, "out_of_domain": 3,
             "in_domain_refused": 2, **{name: 0 for name in COUNTS if name not in (
                 "answered_with_needle", "bluffs", "in_domain", "out_of_domain", "in_domain_refused")}}
            for cut, bluffs in ((0.8, 2), (0.5, 0), (0.6, 0), (0.3, 1))]
    chosen = suggest_cut(rows)
    assert (chosen["cut"], chosen["bluffs"], chosen["reached"]) == (0.5, 0, False)
    with pytest.raises(ValueError, match="^no sweep rows to suggest a cut from$"):
        suggest_cut([])
