"""Compare the figures of two evaluation homes: exit 0 when every measure, interval, paired test and
strategy cost is the same, else list each difference.

    python bench/same_metrics.py BEFORE_HOME AFTER_HOME

Used to show that a change of structure changed no figure (``median_latency_ms`` and the embedding rate are timings and are
left out). Knows the one rename so far: ``recall_at_k`` of a needle evaluation became
``success_at_k`` (and the new ``recall_at_k`` must equal it there); comparison measures likewise.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import duckdb

KEYS = ("model", "strategy", "retriever", "phrasing")
TIMINGS = {"median_latency_ms", "embedding_seconds", "embedding_tokens_per_second"}  # measured, not computed


def _rows(home: Path, sql: str) -> list[dict]:
    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        return connection.sql(sql).to_arrow_table().to_pylist()


def _renamed(row: dict) -> dict:
    """A row in today's names: an old ``recall_at_*`` (which held success@k) as ``success_at_*``."""
    if any(key.startswith("success_at_") for key in row):
        return row
    out = {}
    for key, value in row.items():
        out[key.replace("recall_at_", "success_at_")] = value
        if key.startswith("recall_at_"):
            out[key] = value  # one needle per query: recall@k is success@k
    if "measure" in out and isinstance(out["measure"], str):
        out["measure"] = out["measure"].replace("recall_at_", "success_at_")
    return out


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        # 1e-12 absolute, or relative for large figures (token counts in the tens of thousands): a sum taken
        # over rows in another order differs in its last bits
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b))
    return a == b


def differences(before: Path, after: Path) -> list[str]:
    problems = []
    for name, sql, keys in (
        ("metrics", f"SELECT * FROM metrics ORDER BY {', '.join(KEYS)}", KEYS),
        ("comparisons", "SELECT * FROM comparisons ORDER BY ALL", ("model", "comparison", "a_strategy", "measure")),
        ("chunk_stats", "SELECT * FROM chunk_stats ORDER BY model, strategy", ("model", "strategy")),
    ):
        old = {tuple(r[k] for k in keys): r for r in map(_renamed, _rows(before, sql))}
        new = {tuple(r[k] for k in keys): r for r in map(_renamed, _rows(after, sql))}
        for key in sorted(set(old) | set(new), key=str):
            if key not in old or key not in new:
                problems.append(f"{name} {key}: only {'after' if key in new else 'before'}")
                continue
            for column in sorted(set(old[key]) & set(new[key]) - TIMINGS):
                if not _same(old[key][column], new[key][column]):
                    problems.append(f"{name} {key} {column}: {old[key][column]} -> {new[key][column]}")
            missing = set(old[key]) - set(new[key]) - TIMINGS
            if missing:
                problems.append(f"{name} {key}: columns gone {sorted(missing)}")
        print(f"{name}: {len(new)} rows compared")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = differences(Path(argv[0]), Path(argv[1]))
    print("\n".join(problems) if problems else "every figure is the same")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
