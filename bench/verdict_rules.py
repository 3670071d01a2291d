"""The winner of an evaluation by the old rule and by the new, with the context each puts into a prompt.

    python bench/verdict_rules.py HOME [HOME ...] [--markdown]

For each storage folder (one `rag-assets evaluate` each: the default corpus, a documentation tree), read
its `metrics.duckdb`:

- the old rule (up to 0.3.0): the configuration with the highest MRR over the top 25 (ties: success@20),
  compared at a fixed number of chunks; its context is what its top 4 chunks cost (the old `ask` default
  of 4 chunks), in context tokens;
- the new rule (`lib/evaluate/decision.py`): the highest success within the decision's budget, as `ask`
  builds the context; its context is what it puts in at that budget.

Both winners' success at the budget are printed, so the old winner's cost at equal context shows.
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.lib.evaluate.decision import stored_decision, stored_ranking  # noqa: E402
from rag_assets.lib.evaluate.measures import comparison  # noqa: E402
from rag_assets.lib.store.stamps import EXTERNAL_MODEL  # noqa: E402


def rules(home: Path) -> dict:
    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        decision = stored_decision(connection)
        budget = decision["budget"]
        rows = [r for r in comparison(connection).to_pylist() if r["model"] != EXTERNAL_MODEL]
        ranking = stored_ranking(connection)
        needles = connection.sql("SELECT count(DISTINCT needle_id) FROM query_measures").fetchall()[0][0]
    old = max(rows, key=lambda r: (r["mrr"], r["success_at_20"]))
    new = next(r for r in rows if (r["model"], r["strategy"], r["retriever"]) ==
               (decision["model"], decision["strategy"], decision["retriever"]))
    name = f"success_at_{budget}_tokens"
    return {"home": home.name, "needles": needles, "configurations": len(rows), "budget": budget,
            "old": (f"{old['model']}: {old['strategy']} x {old['retriever']}", old["mrr"], old["success_at_4"],
                    old["context_at_4"], old[name]),
            "new": (f"{new['model']}: {new['strategy']} x {new['retriever']}", new[name], new[f"{name}_low"],
                    new[f"{name}_high"], new[f"context_at_{budget}_tokens"], new["mrr"]),
            "competing": sum(r["rank"] is not None for r in ranking)}


def main(argv: list[str]) -> int:
    homes = [Path(a) for a in argv if not a.startswith("--")]
    print("| corpus | needles | configurations (competing) | old rule: winner | its MRR, S@4 | its context at 4 "
          "chunks | its S@budget | new rule: winner at budget | S@budget [95 %] | its context at budget | its MRR |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for home in homes:
        r = rules(home)
        o, n = r["old"], r["new"]
        print(f"| {r['home']} | {r['needles']} | {r['configurations']} ({r['competing']}) | {o[0]} | {o[1]:.3f}, "
              f"{o[2]:.3f} | {o[3]:,.0f} tokens | {o[4]:.3f} | {n[0]} | {n[1]:.3f} [{n[2]:.2f}, {n[3]:.2f}] | "
              f"{n[4]:,.0f} of {r['budget']} tokens | {n[5]:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
