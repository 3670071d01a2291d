"""A tie on quality is broken by cost, never by name, and the cheaper equivalent the decision names is the one
an independent recomputation from the stored rows names: each competing configuration cheaper than the pick
tested for non-inferiority (one-sided paired t on needles, scipy), adjusted with the rest of the run's family
(exact sign tests, scipy) by Holm (statsmodels), the cheapest that holds."""

import duckdb
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from rag_assets.lib.evaluate.comparisons import write_comparisons
from rag_assets.lib.evaluate.decision import DecisionRule, stored_decision, write_decision
from rag_assets.lib.evaluate.measures import write_results
from rag_assets_tests.lib.evaluate.needle_rows import configuration, table

N = 200
MISS = None
RULE = DecisionRule(budget=1024, budgets=(1024,), margin=0.05)
FOUND = [1] * 196 + [MISS] * 4  # the pick's needles: n0-n195


def _ranks(found: set[int], rank: int = 1) -> list:
    return [rank if i in found else MISS for i in range(N)]


@pytest.fixture
def connection():
    rows = table(
        # two configurations equal on success and MRR: "alpha" is named first, "zeta" answers in half the time
        configuration("m", "zeta", "hybrid", FOUND, latency_ms=5.0),
        configuration("m", "alpha", "hybrid", FOUND, latency_ms=10.0),
        # the cheapest: ten needles fewer, exactly the margin below the pick: not shown non-inferior
        configuration("m", "alpha", "dense", _ranks(set(range(186))), latency_ms=1.0),
        # two needles fewer and one more: within the margin, shown so
        configuration("m", "alpha", "bm25", _ranks(set(range(194)) | {196}), latency_ms=2.0),
        # every needle of the pick, one rank lower: non-inferior too, but dearer than bm25
        configuration("m", "beta", "dense", _ranks(set(range(196)), rank=2), latency_ms=3.0),
    )
    with duckdb.connect() as connection:
        write_results(connection, rows, budgets=(1024,))
        ranking = write_decision(connection, RULE)
        write_comparisons(connection, ranking, RULE)
        yield connection


def test_a_tie_on_success_and_mrr_goes_to_the_faster_configuration_not_the_first_name(connection):
    decision = stored_decision(connection)
    assert (decision["strategy"], decision["retriever"]) == ("zeta", "hybrid")
    assert decision["tied_with"] == "m: alpha x hybrid"
    assert decision["tie_broken_by"] == "lower latency (5.00 vs 10.00 ms median per query)"
    ranks = connection.sql("SELECT strategy, retriever, rank FROM ranking ORDER BY rank").fetchall()
    assert ranks[:2] == [("zeta", "hybrid", 1), ("alpha", "hybrid", 2)]


def _needle_success(connection) -> dict[tuple[str, str, str], dict[str, float]]:
    """Per configuration, each needle's success within 1024 tokens, from retrieval_results by hand."""
    found: dict = {}
    for model, strategy, retriever, needle, rank, context in connection.sql(
            "SELECT model, strategy, retriever, needle_id, hit_rank, context_tokens FROM latest_results").fetchall():
        found.setdefault((model, strategy, retriever), {})[needle] = float(rank is not None and
                                                                           context[rank - 1] <= 1024)
    return found


def test_the_cheaper_equivalent_equals_an_independent_recomputation(connection):
    success = _needle_success(connection)
    pick = ("m", "zeta", "hybrid")
    needles = sorted(success[pick])
    latency = {(model, strategy, retriever): v for model, strategy, retriever, v in connection.sql(
        "SELECT model, strategy, retriever, median(latency_ms) FROM latest_results GROUP BY ALL").fetchall()}
    others = sorted((c for c in success if c != pick), key=lambda c: c[1:])
    family = []  # (kind, configuration, raw p)
    for other in others:  # the pick against every other competing configuration: exact two-sided sign test
        wins = sum(success[pick][n] > success[other][n] for n in needles)
        losses = sum(success[pick][n] < success[other][n] for n in needles)
        p = stats.binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else 1.0
        family.append(("sign", other, p))
    for other in others:  # every configuration faster than the pick: non-inferiority within the margin
        if latency[other] < latency[pick]:
            differences = [success[other][n] - success[pick][n] for n in needles]
            p = stats.ttest_1samp(differences, -0.05, alternative="greater").pvalue
            family.append(("non-inferior", other, 0.0 if p != p else p))  # no spread and above the margin: 0
    adjusted = multipletests([p for *_, p in family], method="holm")[1]
    held = sorted((latency[c], c, a) for (kind, c, _), a in zip(family, adjusted) if kind == "non-inferior"
                  and a < 0.05)
    assert [c for _, c, _ in held] == [("m", "alpha", "bm25"), ("m", "beta", "dense")]  # dense, ten fewer: not
    stored = stored_decision(connection)
    assert (stored["equivalent_model"], stored["equivalent_strategy"], stored["equivalent_retriever"]) == held[0][1]
    assert stored["equivalent_p_adjusted"] == pytest.approx(held[0][2], rel=1e-6)
    assert stored["cheaper_tested"] == 3  # dense, bm25 and beta x dense answer faster than the pick; alpha x hybrid not
    assert stored["equivalent_cost_ratio"] == pytest.approx(2.0 / 5.0)
    assert stored["equivalent_success"] == pytest.approx(195 / 200)
    # the stored raw p-values of the family are the recomputed ones
    stored_p = {(r[0], r[1], r[2], r[3]): r[4] for r in connection.sql(
        "SELECT family, model, a_strategy, a_retriever, p_value FROM comparisons").fetchall()}
    for kind, other, p in family:
        if kind == "non-inferior":
            assert stored_p[("non_inferiority", *other)] == pytest.approx(p, rel=1e-6, abs=1e-12)
