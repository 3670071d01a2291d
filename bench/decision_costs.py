"""The decision a careful engineer makes, on evaluations already run: the pick, a tie and how cost broke it, the
cheaper equivalent with its cost ratio (or how many cheaper configurations were tested and none held), and what
the needles can tell about the runner-up (the detectable difference at 80 % power, the needles the observed
difference needs).

    python bench/decision_costs.py HOME [HOME ...] [--budget 1024] [--margin 0.05]

Each storage folder is one `rag-assets evaluate` (the default corpus, a documentation tree). Its
`metrics.duckdb` is copied to a temporary file and the decision and the family of paired tests are computed
again there from its stored rows with this checkout's rule (`lib/evaluate/decision.py`, `comparisons.py`), so an
evaluation run before the rule changed is decided as it is now; the storage folder itself is only read.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import duckdb

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from rag_assets.lib.evaluate.comparisons import write_comparisons  # noqa: E402
from rag_assets.lib.evaluate.decision import DecisionRule, name_of, stored_decision, write_decision  # noqa: E402


def decide(home: Path, rule: DecisionRule) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "metrics.duckdb"
        shutil.copyfile(home / "metrics.duckdb", copy)
        with duckdb.connect(str(copy)) as connection:
            started = time.perf_counter()
            ranking = write_decision(connection, rule)
            write_comparisons(connection, ranking, rule)
            seconds = time.perf_counter() - started
            decision = stored_decision(connection)
            competing = [r for r in ranking if r["rank"] is not None]
            families = dict(connection.sql("SELECT family, count(*) FROM comparisons GROUP BY 1").fetchall())
    pick, second = competing[0], competing[1] if len(competing) > 1 else None
    return {"home": home.name, "decision": decision, "pick": pick, "second": second, "seconds": seconds,
            "competing": len(competing), "families": families}


def row(found: dict) -> str:
    d, pick, second = found["decision"], found["pick"], found["second"]
    name = f"success_at_{d['budget']}_tokens"
    tie = f"tied with {d['tied_with']}; {d['tie_broken_by']}" if d.get("tied_with") else "no tie"
    if d.get("equivalent_model"):
        equivalent = (f"{name_of((d['equivalent_model'], d['equivalent_strategy'], d['equivalent_retriever']))}, "
                      f"S {d['equivalent_success']:.3f}, {d['equivalent_cost_ratio']:.2f}x latency, "
                      f"adjusted p {d['equivalent_p_adjusted']:.2g}")
    else:
        equivalent = f"none of {d['cheaper_tested']} cheaper shown non-inferior"
    needed = d.get("runner_up_needles_needed")
    detectable = d.get("runner_up_detectable_difference")
    runner_up = (f"{name_of((second['model'], second['strategy'], second['retriever']))} {second[name]:.3f}; "
                 f"{d['runner_up_needles']} needles, {d['runner_up_discordant_rate']:.0%} discordant; detectable "
                 + (f"{detectable:.3f}" if detectable is not None else "none")
                 + "; observed " + f"{d['runner_up_difference']:+.3f} needs "
                 + (f"{needed:,}" if needed is not None else ("-" if not d["runner_up_difference"] else "> 100,000"))
                 ) if second else "-"
    return (f"| {found['home']} | {found['competing']} | {name_of((d['model'], d['strategy'], d['retriever']))} "
            f"{pick[name]:.3f}, {pick['median_latency_ms']:.1f} ms | {tie} | {equivalent} | {runner_up} | "
            f"{found['families'].get('non_inferiority', 0)} + {sum(found['families'].values()) - found['families'].get('non_inferiority', 0)} | "
            f"{found['seconds']:.1f} s |")


def main(argv: list[str]) -> int:
    budget = int(argv[argv.index("--budget") + 1]) if "--budget" in argv else 1024
    margin = float(argv[argv.index("--margin") + 1]) if "--margin" in argv else 0.05
    skip = {argv.index(flag) + 1 for flag in ("--budget", "--margin") if flag in argv}
    homes = [Path(a) for i, a in enumerate(argv) if not a.startswith("--") and i not in skip]
    if not homes:
        print(__doc__, file=sys.stderr)
        return 2
    rule = DecisionRule(budget=budget, margin=margin)
    print(f"At {budget} tokens, margin {margin:g}:")
    print("| corpus | competing | pick: S, median latency | tie | cheaper equivalent | runner-up: what the needles "
          "tell | tests (non-inferiority + difference) | decided in |")
    print("|---|---|---|---|---|---|---|---|")
    for home in homes:
        print(row(decide(home, rule)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
