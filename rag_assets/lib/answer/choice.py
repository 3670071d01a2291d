"""Which configuration `rag-assets ask` answers with, at which budget and where it cuts, when the command
does not say: the verdict's pick (``lib/evaluate/decision.py``: the highest success at the decision's
context budget), or the best ranked configuration within what was given, at its calibrated refusal cut."""

from __future__ import annotations

from dataclasses import dataclass

from rag_assets.lib.answer.ask import AskError
from rag_assets.lib.evaluate.decision import stored_decision, stored_ranking
from rag_assets.lib.evaluate.measures import table_exists
from rag_assets.lib.retrieve.engine import gate_of


@dataclass(frozen=True)
class Choice:
    model: str
    strategy: str
    retriever: str
    budget: int  # the decision's context budget
    why: str  # said with the answer


def can_refuse(retriever: str) -> bool:
    """Whether ``ask`` can gate the retriever: it has a distance, or builds on one that has."""
    try:
        gate_of(retriever)
    except ValueError:
        return False
    return True


def default_configuration(connection, model: str | None = None, strategy: str | None = None,
                          retriever: str | None = None) -> Choice:
    """The verdict's pick when nothing is given; else the best ranked configuration (competing ones first)
    within what was given. ``ask`` must be able to say no: a configuration that cannot refuse (BM25 has no
    distance) is passed over for the best ranked one that can, and the answer says so. AskError when the
    metrics hold none."""
    decision, ranking = stored_decision(connection), stored_ranking(connection)
    named = [r for r in ranking if (model or r["model"]) == r["model"] and (strategy or r["strategy"]) == r["strategy"]
             and (retriever or r["retriever"]) == r["retriever"]]
    rows = [r for r in named if can_refuse(r["retriever"])]
    if decision is None or not rows:
        raise AskError(f"the latest metrics hold no ranked configuration that can refuse for model {model or 'any'}, "
                       f"strategy {strategy or 'any'}, retriever {retriever or 'any'}: run `rag-assets evaluate`")
    best, budget = rows[0], decision["budget"]
    if best["rank"] == 1:
        why = f"the verdict's pick at {budget} context tokens"
    elif best["rank"] is not None:
        why = f"ranked #{best['rank']} at {budget} context tokens, the best"
        why += " within what was given" if (model or strategy or retriever) else ""
        if named[0] is not best:
            passed = named[0]
            why += (f" that can refuse (#{passed['rank']}, {passed['model']}: {passed['strategy']} x "
                    f"{passed['retriever']}, has no distance to refuse on)")
    else:
        why = f"its documents do not fit {budget} context tokens, so it does not compete there"
    return Choice(best["model"], best["strategy"], best["retriever"], budget, why)


def calibrated_cut(connection, model: str, strategy: str, retriever: str) -> float:
    """The suggested cut of a configuration's gate (the retriever whose distance it refuses on; table
    ``suggested_cuts``); AskError when none was calibrated."""
    try:
        gate = gate_of(retriever)
    except ValueError as error:
        raise AskError(str(error)) from None
    found = connection.execute("SELECT cut FROM suggested_cuts WHERE model = ? AND strategy = ? AND retriever = ?",
                               [model, strategy, gate]).fetchall() if table_exists(connection, "suggested_cuts") else []
    if not found:
        raise AskError(f"no calibrated cut for {model} x {strategy} x {gate}: give --cut, or run "
                       f"`rag-assets evaluate` with out-of-domain queries (refusal_calibration)")
    return float(found[0][0])
