"""The figures of the default run, written once to docs/figures/default_run.json for the documentation
(the README and the docs quote them from there, never typed a second time).

    make demo && .venv/bin/python bench/default_run.py [HOME]

HOME is the storage folder `make demo` wrote (default: the ``home`` setting, storage/ in the project).
Reads its metrics.duckdb and Parquet outputs, read-only, and writes the tables (through the same
formatters as the report) and the counts the documentation states: the corpus, the evaluation set,
the verdict and its pick, the dense retriever on every strategy, the models and retrievers on
``boundaries_header``, the paired tests (the field's questions and the pick against its nearest rivals),
what each strategy costs, and the suggested refusal cuts with their separation.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from bench.machine import describe  # noqa: E402
from rag_assets.lib.embed.models import DEFAULT_MODEL  # noqa: E402
from rag_assets.lib.evaluate.decision import stored_decision  # noqa: E402
from rag_assets.lib.evaluate.measures import comparison, paired_comparisons, suggested_cuts  # noqa: E402
from rag_assets.lib.evaluate.report import REPORT_STRATEGY, STRATEGY_RETRIEVER  # noqa: E402
from rag_assets.lib.evaluate.tables import (  # noqa: E402
    format_chunk_stats,
    format_comparisons,
    format_suggested_cuts,
    format_table,
)
from rag_assets.lib.evaluate.verdict import verdict  # noqa: E402
from rag_assets.lib.store.paths import duckdb_path, partition_path  # noqa: E402
from rag_assets.settings import current  # noqa: E402

OUT = PROJECT / "docs" / "figures" / "default_run.json"



def figures(home: Path) -> dict:
    extracted = pq.read_table(partition_path(home, "extracted_text")).to_pylist()
    ok = [row for row in extracted if row["status"] == "ok"]
    evaluation = pq.read_table(partition_path(home, "eval_set"), columns=["query_kind", "kind", "needle_id"])
    queries = evaluation.to_pylist()
    with duckdb.connect(str(duckdb_path(home)), read_only=True) as connection:
        table = comparison(connection)
        rows = table.to_pylist()
        created = connection.sql("SELECT max(created_at) FROM evaluation_runs").fetchall()[0][0]
        models = sorted({row["model"] for row in rows})
        strategies = sorted({row["strategy"] for row in rows})
        retrievers = sorted({row["retriever"] for row in rows})
        dense = table.filter([row["model"] == DEFAULT_MODEL and row["retriever"] == STRATEGY_RETRIEVER
                              for row in rows]).drop_columns(["model", "retriever"])
        on_strategy = table.filter([row["strategy"] == REPORT_STRATEGY for row in rows]).drop_columns(["strategy"])
        phrasings = comparison(connection, ["model", "strategy", "retriever", "phrasing"])
        phrasings = phrasings.filter([(row["model"], row["strategy"], row["retriever"]) ==
                                      (DEFAULT_MODEL, REPORT_STRATEGY, STRATEGY_RETRIEVER)
                                      for row in phrasings.to_pylist()]).drop_columns(["model", "strategy", "retriever"])
        paired = paired_comparisons(connection)
        # the field's questions and the external retrievers, then the pick against its five nearest rivals
        paired = paired.filter([row["family"] != "verdict" or row["comparison"] in
                                [f"pick vs #{n}" for n in range(2, 7)] for row in paired.to_pylist()])
        decision, said = stored_decision(connection), verdict(connection, home)
        costs = connection.sql("SELECT * FROM chunk_stats WHERE model = ? ORDER BY strategy",
                               params=[DEFAULT_MODEL]).to_arrow_table()
        cuts = suggested_cuts(connection)
        cuts = cuts.filter([row["strategy"] == REPORT_STRATEGY for row in cuts.to_pylist()]) if cuts is not None else None
    refusal = {f"{row['model']} {row['retriever']}": {
        key: round(row[key], 3) if isinstance(row[key], float) else row[key]
        for key in ("worst_in_domain", "best_out_of_domain", "auroc", "auroc_low", "auroc_high", "cut",
                    "answered_with_needle", "in_domain", "in_domain_refused", "bluffs", "bluffs_near",
                    "bluffs_off_topic", "out_of_domain", "separable")} for row in (cuts.to_pylist() if cuts else [])}
    budget = decision["budget"]
    [pick] = [row for row in rows if (row["model"], row["strategy"], row["retriever"]) ==
              (decision["model"], decision["strategy"], decision["retriever"])]
    success = f"success_at_{budget}_tokens"
    return {
        "measured": f"{created:%Y-%m-%d}",
        "machine": describe(),
        "command": "make demo && .venv/bin/python bench/default_run.py",
        "corpus": {"documents": len(extracted), "ok": len(ok), "failed": len(extracted) - len(ok),
                   "characters": f"{sum(len(row['text']) for row in ok):,}",
                   "sections": sum(len(row["sections"]) for row in ok)},
        "evaluation_set": {"needles": len({q["needle_id"] for q in queries if q["query_kind"] == "needle"}),
                           "needle_queries": sum(q["query_kind"] == "needle" for q in queries),
                           "out_of_domain": sum(q["query_kind"] == "out_of_domain" for q in queries),
                           "near": sum(q["kind"] == "near" for q in queries),
                           "off_topic": sum(q["kind"] == "off_topic" for q in queries)},
        "configurations": {"models": len(models), "strategies": len(strategies), "retrievers": len(retrievers),
                           "rows": len(rows)},
        "pick": {"configuration": f"{pick['model']} x {pick['strategy']} x {pick['retriever']}",
                 "budget": budget,
                 "success": f"{pick[success]:.3f} [{pick[success + '_low']:.2f}, {pick[success + '_high']:.2f}]",
                 "mrr": f"{pick['mrr']:.3f} [{pick['mrr_low']:.2f}, {pick['mrr_high']:.2f}]",
                 "context": f"{pick[f'context_at_{budget}_tokens']:.0f}"},
        "verdict": "```\n" + said.replace(Path(home).absolute().as_uri(), "file:///path/to/project/storage")
        .replace(str(home), "storage") + "\n```",
        "refusal": refusal,
        "tables": {
            "dense_by_strategy": format_table(dense),
            "models_and_retrievers": format_table(on_strategy),
            "paired_tests": format_comparisons(paired),
            "by_phrasing": format_table(phrasings),
            "chunk_costs": format_chunk_stats(costs),
            "refusal": format_suggested_cuts(cuts) if cuts is not None else "",
        },
        "written": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def main(argv: list[str]) -> int:
    home = Path(argv[0]).resolve() if argv else current().home
    if not duckdb_path(home).exists():
        print(f"no metrics.duckdb under {home}: run `make demo` (or `rag-assets evaluate`) first", file=sys.stderr)
        return 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(figures(home), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(PROJECT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
