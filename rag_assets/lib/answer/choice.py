"""Which configuration `rag-assets ask` answers with, and where it cuts, when the command does not say:
the best gated configuration of the latest metrics (highest MRR, then success@4) within what was
given, at its calibrated refusal cut."""

from __future__ import annotations

from rag_assets.lib.answer.ask import GATED, AskError
from rag_assets.lib.evaluate.measures import comparison, table_exists


def default_configuration(connection, model: str | None = None, strategy: str | None = None,
                          retriever: str | None = None) -> tuple[str, str, str]:
    """The best gated configuration of the latest metrics (highest MRR, then success@4), within what
    was given; AskError when the metrics hold none."""
    rows = [r for r in comparison(connection).to_pylist()
            if r["retriever"] in GATED and (model or r["model"]) == r["model"]
            and (strategy or r["strategy"]) == r["strategy"] and (retriever or r["retriever"]) == r["retriever"]]
    if not rows:
        raise AskError(f"the latest metrics hold no evaluated configuration for model {model or 'any'}, strategy "
                       f"{strategy or 'any'}, retriever {retriever or ' or '.join(GATED)}: run `rag-assets evaluate`")
    best = max(rows, key=lambda r: (r["mrr"], r["success_at_4"]))
    return best["model"], best["strategy"], best["retriever"]


def calibrated_cut(connection, model: str, strategy: str, retriever: str) -> float:
    """The suggested cut of a configuration (table ``suggested_cuts``); AskError when none was calibrated."""
    found = connection.execute("SELECT cut FROM suggested_cuts WHERE model = ? AND strategy = ? AND retriever = ?",
                               [model, strategy, retriever]).fetchall() if table_exists(connection, "suggested_cuts") else []
    if not found:
        raise AskError(f"no calibrated cut for {model} x {strategy} x {retriever}: give --cut, or run "
                       f"`rag-assets evaluate` with out-of-domain queries (refusal_calibration)")
    return float(found[0][0])
