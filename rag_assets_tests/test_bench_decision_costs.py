"""bench/decision_costs.py decides again on a copy of a storage folder's metrics.duckdb: the stored rows'
tie, cheaper equivalent and runner-up sensitivity, and the folder itself is left as it was."""

import hashlib
import importlib.util
from pathlib import Path

import duckdb

from rag_assets.lib.evaluate.decision import DecisionRule
from rag_assets.lib.evaluate.measures import write_results
from rag_assets_tests.lib.evaluate.needle_rows import configuration, table

BENCH = Path(__file__).resolve().parents[1] / "bench" / "decision_costs.py"
N = 200


def _bench():
    spec = importlib.util.spec_from_file_location("decision_costs", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ranks(found: set[int], rank: int = 1) -> list:
    return [rank if i in found else None for i in range(N)]


def test_a_stored_evaluation_is_decided_again_on_a_copy(tmp_path):
    found = set(range(196))
    rows = table(configuration("m", "zeta", "hybrid", _ranks(found), latency_ms=5.0),
                 configuration("m", "alpha", "hybrid", _ranks(found), latency_ms=10.0),
                 configuration("m", "alpha", "bm25", _ranks(set(range(194)) | {196}), latency_ms=2.0))
    with duckdb.connect(str(tmp_path / "metrics.duckdb")) as connection:
        write_results(connection, rows, budgets=(1024,))
    before = hashlib.sha256((tmp_path / "metrics.duckdb").read_bytes()).hexdigest()
    bench = _bench()
    found_row = bench.decide(tmp_path, DecisionRule(budget=1024, budgets=(1024,)))
    said = bench.row(found_row)
    assert "m: zeta x hybrid 0.980, 5.0 ms" in said
    assert "tied with m: alpha x hybrid; lower latency (5.00 vs 10.00 ms median per query)" in said
    assert "m: alpha x bm25, S 0.975, 0.40x latency" in said
    assert found_row["families"] == {"verdict": 2, "non_inferiority": 1}
    assert hashlib.sha256((tmp_path / "metrics.duckdb").read_bytes()).hexdigest() == before  # only read


def test_without_a_folder_it_says_how_to_run_it(capsys):
    assert _bench().main([]) == 2
    assert "decision_costs.py HOME" in capsys.readouterr().err
