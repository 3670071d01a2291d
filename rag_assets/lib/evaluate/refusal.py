"""Calibrating a refusal threshold: the retriever must be able to say no.

A retriever with a distance scale (``dense``: cosine distance ``1 - cos``; ``late_interaction``:
``1 - mean MaxSim``, the same scale) can refuse: the gate keeps, among the first ``K`` = 4 chunks,
those closer than a cut, and answers "nothing found" when it keeps none. This module sweeps the cut
over one model x strategy partition's stored retrieval rows and picks one.

Conventions:

- Only rows whose ``distances`` is not None are calibrated (other retrievers have no scale).
  Needle and document queries are in-domain; out-of-domain queries (``kind`` "near" or
  "off_topic") have no right answer and should be refused.
- The gate keeps the 0-based positions ``i < k`` with ``distances[i] < cut`` (strictly); the
  distances ascend, so what it keeps is a prefix.
- At each cut every query lands in exactly one outcome and stays in its denominator: an in-domain
  query is answered with its needle (a kept position holds it: some ``r`` in ``relevant_ranks``
  with ``r - 1`` kept), answered without it, or refused; an out-of-domain query is a bluff
  (answered anyway) or refused. A needle ranked below ``k`` can never be kept.
- A query's best distance is ``distances[0]`` (infinity when nothing was returned: farther than
  anything). AUROC is the Mann-Whitney AUC of best distances, the probability that a random
  out-of-domain query lies farther than a random in-domain one, ties counting 1/2 (1.0: perfectly
  separable, 0.5: chance, 0.0: reversed). Its 95 % interval is the percentile bootstrap over
  ``BOOTSTRAP_RESAMPLES`` resamples, in- and out-of-domain queries resampled separately with
  replacement, from ``numpy.random.default_rng(seed=0)`` (the in-domain indices drawn first).
- ``separable``: on the distance scale alone (ignoring the k limit), some cut keeps every returned
  in-domain needle chunk and refuses every out-of-domain query, i.e. the worst in-domain needle
  distance is below the best out-of-domain distance; vacuously true when either side is empty.
- Shares carry Wilson 95 % intervals (``evaluate.intervals.wilson_interval``); a share of no queries is 0
  with the interval [0, 1].

The rule that suggests a cut (``RULE``): a query is *answerable* when the ungated top k holds its
needle (no cut can do better than the retriever). Among the cuts that keep at least 90 % of the
answerable in-domain queries answered with their needle among the kept chunks, the one with the
fewest bluffs (out-of-domain queries answered anyway); ties go to the smallest cut, the most
cautious one with those bluffs. The gate then costs at most a tenth of what the retriever finds.
When nothing is answerable, the smallest cut with the most answered (and ``reached`` is False).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.stats import rankdata

from rag_assets.lib.evalsets.queries import OUT_OF_DOMAIN
from rag_assets.lib.evaluate.intervals import wilson_interval

CUTS = np.round(np.arange(0.30, 1.0 + 1e-9, 0.005), 3)  # 141 cuts
K = 4
MIN_ANSWERED = 0.9
BOOTSTRAP_RESAMPLES = 2000

COUNTS = ("in_domain", "out_of_domain", "near", "off_topic", "answered_with_needle", "answered_without_needle",
          "in_domain_refused", "bluffs", "bluffs_near", "bluffs_off_topic", "out_of_domain_refused")
SEPARATION_FIELDS = ("worst_in_domain", "best_out_of_domain", "separable", "auroc", "auroc_low", "auroc_high",
                     "in_domain", "out_of_domain")
# The shares suggest_cut reports with intervals: name -> (count, denominator).
SHARES = {"answered": ("answered_with_needle", "in_domain"), "bluff": ("bluffs", "out_of_domain"),
          "refused": ("in_domain_refused", "in_domain")}


def rule_text(min_answered: float = MIN_ANSWERED) -> str:
    """The suggestion rule in one line."""
    return (f"among the cuts that keep at least {min_answered:.0%} of the answerable in-domain queries (those whose "
            "needle the ungated top k holds) answered with their needle, the fewest bluffs, ties to the smallest "
            "cut; when nothing is answerable, the smallest cut")


RULE = rule_text()


# --- the gate and the sweep -------------------------------------------------------------------


def gate(distances: Sequence[float], cut: float, k: int = K) -> list[int]:
    """The 0-based positions kept: among the first ``k``, those with distance strictly below ``cut``."""
    return [position for position, distance in enumerate(distances[:k]) if distance < cut]


def calibrated(rows: Sequence[dict]) -> list[dict]:
    """The rows of retrievers with a distance scale."""
    return [row for row in rows if row["distances"] is not None]


def is_in_domain(row: dict) -> bool:
    """Needle and document queries are in-domain."""
    return row["query_kind"] != OUT_OF_DOMAIN


def retrievers_of(rows: Sequence[dict]) -> list[str]:
    return sorted({row["retriever"] for row in calibrated(rows)})


def rows_of(rows: Sequence[dict], retriever: str) -> list[dict]:
    return [row for row in calibrated(rows) if row["retriever"] == retriever]


def kept_a_needle_chunk(row: dict, kept: Sequence[int]) -> bool:
    """Whether a kept position holds the needle: some relevant rank ``r`` with ``r - 1`` kept."""
    return any(rank - 1 in kept for rank in row["relevant_ranks"] or [])


def outcome(row: dict, cut: float, k: int = K) -> list[str]:
    """The counts (names in ``COUNTS``) one query adds to at this cut."""
    kept = gate(row["distances"], cut, k)
    if is_in_domain(row):
        if not kept:
            return ["in_domain", "in_domain_refused"]
        return ["in_domain", "answered_with_needle" if kept_a_needle_chunk(row, kept) else "answered_without_needle"]
    kind = row["kind"]
    return ["out_of_domain", kind, *(["bluffs", f"bluffs_{kind}"] if kept else ["out_of_domain_refused"])]


def tally(rows: Sequence[dict], cut: float, k: int = K) -> dict:
    """Every count of ``COUNTS`` over the rows at one cut (0 when none)."""
    counts = Counter(name for row in rows for name in outcome(row, cut, k))
    return {name: counts[name] for name in COUNTS}


def sweep(rows: Sequence[dict], cuts: Sequence[float] = CUTS, k: int = K) -> list[dict]:
    """One row per retriever with a distance scale and cut: retriever, cut and the ``COUNTS``."""
    return [{"retriever": retriever, "cut": float(cut), **tally(rows_of(rows, retriever), cut, k)}
            for retriever in retrievers_of(rows) for cut in cuts]


# --- separation ------------------------------------------------------------------------------


def best_distance(row: dict) -> float:
    """``distances[0]``; infinity when nothing was returned."""
    return row["distances"][0] if row["distances"] else math.inf


def best_distances(rows: Sequence[dict], retriever: str) -> tuple[list[float], list[float]]:
    """(in-domain, out-of-domain) best distances of the retriever's queries."""
    own = rows_of(rows, retriever)
    return ([best_distance(row) for row in own if is_in_domain(row)],
            [best_distance(row) for row in own if not is_in_domain(row)])


def needle_distance(row: dict) -> float:
    """The distance at the first rank that holds the needle (the row must have one)."""
    return row["distances"][min(row["relevant_ranks"]) - 1]


def auroc_of(in_domain: Sequence[float], out_of_domain: Sequence[float]) -> np.ndarray:
    """Mann-Whitney AUC, P(out-of-domain > in-domain) + P(tie) / 2, from average ranks; each row of
    the 2-D inputs (resamples x queries) is one sample."""
    inside, outside = np.atleast_2d(in_domain), np.atleast_2d(out_of_domain)
    n_in, n_out = inside.shape[1], outside.shape[1]
    ranks = rankdata(np.concatenate([inside, outside], axis=1), axis=1)
    return (ranks[:, n_in:].sum(axis=1) - n_out * (n_out + 1) / 2) / (n_in * n_out)


def auroc(in_domain: Sequence[float], out_of_domain: Sequence[float],
          resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float | None, float | None, float | None]:
    """(AUROC, 95 % bootstrap low, high); None throughout when either side is empty."""
    if not len(in_domain) or not len(out_of_domain):
        return None, None, None
    inside, outside = np.asarray(in_domain, dtype=float), np.asarray(out_of_domain, dtype=float)
    rng = np.random.default_rng(seed=0)
    picks_in = rng.integers(0, len(inside), size=(resamples, len(inside)))
    picks_out = rng.integers(0, len(outside), size=(resamples, len(outside)))
    low, high = np.percentile(auroc_of(inside[picks_in], outside[picks_out]), [2.5, 97.5])
    return float(auroc_of(inside, outside)[0]), float(low), float(high)


def separation_of(rows: Sequence[dict], retriever: str) -> dict:
    """The ``SEPARATION_FIELDS`` of one retriever (distances None where there is nothing to take them from)."""
    own = rows_of(rows, retriever)
    needles = [needle_distance(row) for row in own if is_in_domain(row) and row["relevant_ranks"]]
    in_domain, out_of_domain = best_distances(rows, retriever)
    worst = max(needles) if needles else None
    best = min(out_of_domain) if out_of_domain else None
    value, low, high = auroc(in_domain, out_of_domain)
    return {"worst_in_domain": worst, "best_out_of_domain": best,
            "separable": worst is None or best is None or worst < best,
            "auroc": value, "auroc_low": low, "auroc_high": high,
            "in_domain": len(in_domain), "out_of_domain": len(out_of_domain)}


def separation(rows: Sequence[dict]) -> dict[str, dict]:
    """Retriever -> its ``SEPARATION_FIELDS``."""
    return {retriever: separation_of(rows, retriever) for retriever in retrievers_of(rows)}


# --- the suggested cut -----------------------------------------------------------------------


def share(successes: int, n: int) -> float:
    return successes / n if n else 0.0


def answerable(sweep_rows: Sequence[dict]) -> int:
    """In-domain queries the ungated top k answers with their needle: the most any cut can keep."""
    return max((row["answered_with_needle"] for row in sweep_rows), default=0)


def needed(min_answered: float, answerable_queries: int) -> int:
    """The fewest queries answered with their needle that make ``min_answered`` of the answerable ones: a
    count, rounded up (the 1e-9 absorbs the float product's error: 0.55 x 100 is 55.00000000000001, and 55
    queries make 55 %)."""
    return math.ceil(min_answered * answerable_queries - 1e-9)


def reaches(row: dict, min_answered: float, answerable_queries: int) -> bool:
    """At least ``min_answered`` of the answerable queries answered with their needle (never with none)."""
    return answerable_queries > 0 and row["answered_with_needle"] >= needed(min_answered, answerable_queries)


def with_intervals(row: dict) -> dict:
    """The ``SHARES`` of a sweep row, each with its Wilson 95 % interval (``answered``, ``answered_low``, ...)."""
    fields = {}
    for name, (count, denominator) in SHARES.items():
        low, high = wilson_interval(row[count], row[denominator])
        fields |= {name: share(row[count], row[denominator]), f"{name}_low": low, f"{name}_high": high}
    return fields


def suggest_cut(sweep_rows: Sequence[dict], min_answered: float = MIN_ANSWERED) -> dict:
    """The sweep row of one retriever's cut chosen by the rule (module docstring), with ``reached``,
    ``rule`` and ``with_intervals``."""
    if not sweep_rows:
        raise ValueError("no sweep rows to suggest a cut from")
    if not 0 < min_answered <= 1:  # above 1 no cut could reach the share, and the fallback would decide alone
        raise ValueError(f"min_answered is a share of the answerable queries, in (0, 1]: not {min_answered}")
    reaching = [row for row in sweep_rows if reaches(row, min_answered, answerable(sweep_rows))]
    if reaching:
        chosen = min(reaching, key=lambda row: (row["bluffs"], row["cut"]))
    else:
        chosen = min(sweep_rows, key=lambda row: (-row["answered_with_needle"], row["bluffs"], row["cut"]))
    return {**chosen, "reached": bool(reaching), "rule": rule_text(min_answered), **with_intervals(chosen)}


def calibrate(rows: Sequence[dict], cuts: Sequence[float] = CUTS, k: int = K,
              min_answered: float = MIN_ANSWERED) -> tuple[list[dict], list[dict]]:
    """(every sweep row with its retriever's separation fields and ``suggested``, one suggestion per
    retriever with its separation fields). The separation's ``in_domain`` and ``out_of_domain`` are
    the sweep's counts (the same queries), and every sweep row has the same keys."""
    swept, suggestions = [], []
    for retriever, separated in separation(rows).items():
        own = sweep(rows_of(rows, retriever), cuts, k)
        suggestion = suggest_cut(own, min_answered)
        swept += [{**row, **separated, "suggested": row["cut"] == suggestion["cut"]} for row in own]
        suggestions.append({**suggestion, **separated})
    return swept, suggestions
