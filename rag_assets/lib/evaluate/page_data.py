"""What the evaluation page (``page.py``) shows, gathered from ``metrics.duckdb`` and the stored partitions:
the decision, every configuration's figures, each configuration's answer to each question of the newest
run (its top chunks, where the needle's chunk ranked, whether it was inside the context at the budget),
the chunks those answers name with the needle located in them, why each miss missed, and the history.

Everything a person can choose on the page (any two configurations side by side, any configuration's
misses, any two runs) is computed here for every choice, so the page needs no server: a configuration's
answer to a needle is the mean over the needle's phrasings of "its chunk was inside the context at the
budget" (0, 0.5 or 1 for two phrasings), as the decision counts it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from rag_assets.lib.evalsets.judging import chunks_by_document, span_holders
from rag_assets.lib.evaluate import catalog
from rag_assets.lib.evaluate.comparisons import DIFFERENCE_FAMILIES, QUESTIONS, adjustment_label, name_of
from rag_assets.lib.evaluate.decision import stored_decision, stored_ranking
from rag_assets.lib.evaluate.measures import (
    aggregated,
    budgets_of,
    by_needle,
    comparison,
    paired_comparisons,
    per_query,
    table_exists,
)
from rag_assets.lib.evaluate.needle_changes import changes_of_run, latest_needle_changes, needles_of_run
from rag_assets.lib.evaluate.size_view import FIXED_K
from rag_assets.lib.evaluate.verdict import choice_lines, refusal_lines, verdict
from rag_assets.lib.ingest.documents import canonical_texts
from rag_assets.lib.ingest.folding import find_folded
from rag_assets.lib.retrieve.engine import gate_of
from rag_assets.lib.store import paths
from rag_assets.lib.store.stamps import EXTERNAL_MODEL

TOP_CHUNKS = 3  # chunks shown of each answer, besides the needle's own where it ranked lower
WHOLE_CONTENT = 1200  # characters of a chunk shown whole; a longer one shows its head and the needle's stretch
HEAD = 500  # characters of a long chunk's head
AROUND = 300  # characters either side of a needle in a long chunk
HISTORY_RUNS = 30  # the newest runs the history and the run-to-run comparison cover
TABLE_MEASURES = ("success_at_1", "success_at_4", "success_at_20", "mrr", "ndcg_at_10")


def key_of(model: str, strategy: str, retriever: str) -> str:
    return f"{model}|{strategy}|{retriever}"


def _rows(connection: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict]:
    cursor = connection.execute(sql, params or [])
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _clean(value):
    """A JSON value: NaN and infinities as None, floats rounded to what a person reads."""
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else round(value, 6)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ", timespec="seconds") if hasattr(value, "hour") else value.isoformat()
    return value


def locate(content: str, needle: str) -> tuple[int, int] | None:
    """Where ``needle`` lies in ``content``, folded as judging folds it (``holds_needle``), as (start, end)
    offsets of ``content``; None when it does not lie there whole."""
    return find_folded(content, needle)


def _mean_difference_interval(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """The mean paired difference a - b over needles and its normal-approximation 95 % interval."""
    differences = [x - y for x, y in zip(a, b)]
    n = len(differences)
    if n == 0:
        return 0.0, 0.0, 0.0
    mean = sum(differences) / n
    if n < 2:
        return mean, mean, mean
    variance = sum((d - mean) ** 2 for d in differences) / (n - 1)
    half = 1.96 * math.sqrt(variance / n)
    return mean, max(-1.0, mean - half), min(1.0, mean + half)


class PageData:
    """Collects the page's data from one open (read-only) connection and the storage folder."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, home: Path):
        self.connection, self.home = connection, Path(home)
        self.decision = stored_decision(connection) or {}
        self.budget = self.decision.get("budget") or 1024
        self.budgets = budgets_of(connection)
        self.hit = f"hit_in_{self.budget}_tokens" if self.budget in self.budgets else "hit_at_4"

    # the newest run -------------------------------------------------------------------------------------------

    def latest_run(self) -> dict:
        [run] = _rows(self.connection, "SELECT * FROM evaluation_runs ORDER BY created_at DESC, run_id LIMIT 1")
        return run

    def configurations(self) -> list[dict]:
        """Every configuration's figures (``comparison``) with its rank in the decision (None: not competing or
        external), best first by the decision's measure."""
        ranking = {key_of(r["model"], r["strategy"], r["retriever"]): r for r in stored_ranking(self.connection)}
        measure = self.decision.get("measure") or "success_at_4"
        rows = []
        for row in comparison(self.connection).to_pylist():
            key = key_of(row["model"], row["strategy"], row["retriever"])
            ranked = ranking.get(key)
            row |= {"key": key, "name": name_of((row["model"], row["strategy"], row["retriever"])),
                    "rank": ranked["rank"] if ranked else None,
                    "competes": ranked["competes"] if ranked else False,
                    "external": row["model"] == EXTERNAL_MODEL}
            rows.append(row)
        return sorted(rows, key=lambda r: (-(r.get(measure) or 0.0), r["rank"] is None, r["rank"] or 0, r["key"]))

    def answers(self) -> list[dict]:
        """Each configuration's answer to each query of the newest run."""
        hit = self.hit
        return _rows(self.connection, f"""
            SELECT model, strategy, retriever, query_id, needle_id, phrasing, query_kind, hit_rank, chunk_ids,
                   distances, scores, context_tokens, {hit} AS inside
            FROM ({per_query('latest_results', self.budgets)}) AS judged UNION ALL BY NAME
            SELECT model, strategy, retriever, query_id, needle_id, phrasing, query_kind, NULL AS hit_rank, chunk_ids,
                   distances, scores, context_tokens, NULL AS inside
            FROM latest_results WHERE query_kind = 'out_of_domain'
            ORDER BY model, strategy, retriever, query_id""")

    # the questions and the chunks -----------------------------------------------------------------------------

    def questions(self) -> list[dict]:
        file = paths.stored_partition(self.home, "eval_set")
        if not file.exists():
            return []
        rows = pq.read_table(file, columns=["query_id", "needle_id", "phrasing", "question", "query_kind", "kind",
                                            "spans"]).to_pylist()
        return [{"query_id": r["query_id"], "needle_id": r["needle_id"], "phrasing": r["phrasing"],
                 "question": r["question"], "query_kind": r["query_kind"], "kind": r["kind"],
                 "needle": r["spans"][0]["text"] if r["spans"] else None,
                 "doc_id": r["spans"][0]["doc_id"] if r["spans"] else None} for r in rows]

    def documents(self) -> dict[str, str]:
        file = paths.stored_partition(self.home, "extracted_text")
        if not file.exists():
            return {}
        return canonical_texts(pq.read_table(file, columns=["doc_id", "text", "status"]).to_pylist())

    def strategy_chunks(self, strategy: str) -> dict[str, dict]:
        file = paths.stored_partition(self.home, "chunks", [("strategy", strategy)])
        if not file.exists():
            return {}
        rows = pq.read_table(file, columns=["chunk_id", "doc_id", "section", "content", "start", "end"]).to_pylist()
        return {row["chunk_id"]: row for row in rows}

    def destroyed(self) -> dict[str, set[str]]:
        """{strategy: the needles no chunk of it holds whole}."""
        if not table_exists(self.connection, "chunk_stats"):
            return {}
        return {r["strategy"]: set(r["destroyed_needles"] or []) for r in _rows(
            self.connection, "SELECT strategy, any_value(destroyed_needles) AS destroyed_needles FROM chunk_stats "
            "GROUP BY strategy")}

    def truncated(self, model: str, strategy: str) -> dict[str, int]:
        """{chunk id: its tokens} of the chunks the model's encoder truncates in that partition."""
        file = paths.stored_partition(self.home, "embeddings", [("model", model), ("strategy", strategy)])
        if not file.exists():
            return {}
        rows = pq.read_table(file, columns=["chunk_id", "tokens", "truncated"]).to_pylist()
        return {row["chunk_id"]: row["tokens"] for row in rows if row["truncated"]}

    # the history ----------------------------------------------------------------------------------------------

    def runs(self) -> list[dict]:
        """The newest ``HISTORY_RUNS`` runs, oldest first, with the revisions of each model they hold."""
        runs = _rows(self.connection, "SELECT * FROM evaluation_runs ORDER BY created_at DESC, run_id LIMIT ?",
                     [HISTORY_RUNS])
        for run in runs:
            stamps = json.loads(run["stamps"]) if isinstance(run.get("stamps"), str) else (run.get("stamps") or [])
            run["revisions"] = {s["model"]: s["revision"] for s in stamps if s.get("revision")}
            settings = run.get("settings")
            run["settings"] = json.loads(settings) if isinstance(settings, str) else (settings or {})
            run.pop("stamps", None)
        return list(reversed(runs))

    def history(self, run_ids: list[str]) -> list[dict]:
        """Success at the budget and MRR of every configuration in each of ``run_ids``, with intervals."""
        if not run_ids or not self.budgets:
            return []
        kept = [catalog.measure(self.decision.get("measure") or catalog.budget_measure(self.budget).name),
                catalog.measure("mrr")]
        listed = ", ".join(f"'{run_id}'" for run_id in run_ids)
        source = per_query("retrieval_results", self.budgets) + f" AND run_id IN ({listed})"
        return _rows(self.connection, aggregated(source, ("run_id", "model", "strategy", "retriever"), self.budgets,
                                                 kept))

    def needle_values(self, run_ids: list[str]) -> list[dict]:
        """Each configuration's answer to each needle (mean over its phrasings of inside-the-budget) per run."""
        if not run_ids or not self.budgets:
            return []
        listed = ", ".join(f"'{run_id}'" for run_id in run_ids)
        source = per_query("retrieval_results", self.budgets) + f" AND run_id IN ({listed})"
        column = catalog.budget_measure(self.budget).column if self.budget in self.budgets else "hit_at_4"
        return _rows(self.connection, f"SELECT run_id, model, strategy, retriever, unit, {column} AS value FROM "
                                      f"({by_needle(source, ('run_id', 'model', 'strategy', 'retriever'), self.budgets)})")


def _needle_string(values: dict[str, float], needles: list[str]) -> str:
    """One character per needle: 1 inside the context, 0 not, h for half its phrasings, - not asked."""
    out = []
    for needle in needles:
        value = values.get(needle)
        out.append("-" if value is None else "1" if value >= 1 - 1e-9 else "0" if value <= 1e-9 else "h")
    return "".join(out)


def size_points(connection: duckdb.DuckDBPyConnection, decision: dict) -> dict:
    """The size view of the pick's model and retriever (``size_view``, as stored): every point, and the k its
    fixed-k figures are at."""
    if not table_exists(connection, "size_view"):
        return {"k": FIXED_K[-1], "points": []}
    pick = (decision or {}).get("pick")
    configuration = next((c for c in _rows(connection, "SELECT model, strategy, retriever FROM decision")), None)
    if not pick or configuration is None or configuration["model"] is None:
        return {"k": FIXED_K[-1], "points": []}
    points = _rows(connection, "SELECT * FROM size_view WHERE model = ? AND retriever = ? ORDER BY family, unit, size, "
                               "overlap", [configuration["model"], configuration["retriever"]])
    return {"k": FIXED_K[-1], "points": points}


def gather(connection: duckdb.DuckDBPyConnection, home: Path) -> dict:
    """The page's data, as plain JSON values."""
    data = PageData(connection, home)
    run = data.latest_run()
    configurations = data.configurations()
    questions = data.questions()
    needles = sorted({q["needle_id"] for q in questions if q["query_kind"] == "needle" and q["needle_id"]})
    needle_index = {needle: i for i, needle in enumerate(needles)}
    query_index = {q["query_id"]: i for i, q in enumerate(questions)}
    needle_text = {q["needle_id"]: q["needle"] for q in questions if q["needle_id"]}
    documents = data.documents()
    destroyed = data.destroyed()

    chunk_refs: dict[str, int] = {}
    chunk_rows: list[list] = []
    snippets: dict[str, list] = {}  # "chunk ref:needle index" -> [offset, text, start, end]
    highlights: dict[str, list] = {}  # "chunk ref:needle index" -> [start, end] within the shown content
    strategies: dict[str, dict[str, dict]] = {}
    holders: dict[str, dict[str, set[str]]] = {}

    def chunks_of(strategy: str) -> dict[str, dict]:
        if strategy not in strategies:
            strategies[strategy] = data.strategy_chunks(strategy)
            by_doc = chunks_by_document(strategies[strategy].values())
            holders[strategy] = {needle: span_holders([(q["doc_id"], q["needle"])], by_doc, documents)
                                 for needle, q in {q["needle_id"]: q for q in questions
                                                   if q["query_kind"] == "needle" and q["needle_id"]}.items()}
        return strategies[strategy]

    def ref(strategy: str, chunk_id: str, needle: str | None) -> int | None:
        chunks = chunks_of(strategy)
        chunk = chunks.get(chunk_id)
        if chunk is None:
            return None
        if chunk_id not in chunk_refs:
            content = chunk["content"]
            shown = content if len(content) <= WHOLE_CONTENT else content[:HEAD]
            chunk_refs[chunk_id] = len(chunk_rows)
            chunk_rows.append([chunk_id, chunk["doc_id"], chunk["section"] or "", shown, len(content), chunk["start"]])
        index = chunk_refs[chunk_id]
        if needle and needle in needle_index and chunk_id in holders[strategy].get(needle, set()):
            key = f"{index}:{needle_index[needle]}"
            if key not in highlights and key not in snippets:
                content = chunk["content"]
                place = locate(content, needle_text[needle])
                if place and place[1] <= len(chunk_rows[index][3]):
                    highlights[key] = list(place)
                elif place:
                    start = max(0, place[0] - AROUND)
                    snippets[key] = [start, content[start:place[1] + AROUND], place[0] - start, place[1] - start]
        return index

    answers: dict[str, list] = {}
    values: dict[str, dict[str, list[float]]] = {}
    truncated: dict[tuple[str, str], dict[str, int]] = {}
    for row in data.answers():
        key = key_of(row["model"], row["strategy"], row["retriever"])
        needle = row["needle_id"] if row["query_kind"] == "needle" else None
        ids = row["chunk_ids"] or []
        shown = [ref(row["strategy"], c, needle) for c in ids[:TOP_CHUNKS]] if row["model"] != EXTERNAL_MODEL else []
        distances = (row["distances"] or [])[:TOP_CHUNKS]
        own = None
        if row["hit_rank"] and row["hit_rank"] > TOP_CHUNKS and row["model"] != EXTERNAL_MODEL:
            own = ref(row["strategy"], ids[row["hit_rank"] - 1], needle)
        context = row["context_tokens"] or []
        answer = {"q": query_index.get(row["query_id"]), "r": row["hit_rank"], "in": row["inside"],
                  "c": shown, "d": [None if d is None else round(d, 4) for d in distances],
                  "s": [None if s is None else round(s, 4) for s in (row["scores"] or [])[:TOP_CHUNKS]]}
        if own is not None:
            answer |= {"o": own, "od": round(row["distances"][row["hit_rank"] - 1], 4)
                       if row["distances"] and row["distances"][row["hit_rank"] - 1] is not None else None}
        if row["hit_rank"]:
            answer["t"] = context[row["hit_rank"] - 1] if len(context) >= row["hit_rank"] else None
        if needle and not row["inside"]:
            answer["why"] = _why(row, needle_text[needle], data, destroyed, holders, chunks_of, ref, truncated, context)
        answers.setdefault(key, []).append(answer)
        if needle and row["inside"] is not None:
            values.setdefault(key, {}).setdefault(needle, []).append(float(row["inside"]))
    needle_strings = {key: _needle_string({n: sum(v) / len(v) for n, v in by.items()}, needles)
                      for key, by in values.items()}

    decision = _decision(data, configurations, values, needles)
    runs = data.runs()
    run_ids = [r["run_id"] for r in runs]
    history = data.history(run_ids)
    per_run: dict[tuple[str, str], dict[str, float]] = {}
    for row in data.needle_values(run_ids):
        if row["value"] is not None:
            per_run.setdefault((row["run_id"], key_of(row["model"], row["strategy"], row["retriever"])), {})[
                row["unit"]] = row["value"]
    return _clean({
        "title": "rag_assets evaluation",
        "run": {"run_id": run["run_id"], "created_at": run["created_at"], "snapshot_id": run["snapshot_id"],
                "eval_hash": run["eval_hash"], "home": str(home)},
        "budget": data.budget, "budgets": list(data.budgets), "measure": data.decision.get("measure"),
        "tokenizer": data.decision.get("tokenizer"),
        "adjustment": adjustment_label(data.decision.get("adjustment") or "holm"),
        "alpha": data.decision.get("alpha") or 0.05,
        "decision": decision,
        "verdict": verdict(connection, home),
        "needle_changes": latest_needle_changes(connection),
        "configurations": configurations,
        "needles": [{"id": n, "text": needle_text.get(n)} for n in needles],
        "questions": questions,
        "answers": answers,
        "needle_values": needle_strings,
        "chunks": chunk_rows, "highlights": highlights, "snippets": snippets,
        "refusal": _refusal(data, decision),
        "sizes": size_points(connection, decision),
        "runs": runs,
        "history": history,
        "run_values": {f"{run_id}|{key}": _needle_string(v, needles) for (run_id, key), v in per_run.items()},
        # what each run asked (needle id -> hash of its text) and what its snapshot lost: two runs are compared
        # on the needles present and unchanged in both (None: a run from before runs kept their needles)
        "run_needles": {run_id: needles_of_run(connection, run_id) for run_id in run_ids},
        "run_changes": {run_id: changes_of_run(connection, run_id) for run_id in run_ids},
    })


def _why(row: dict, text: str, data: PageData, destroyed: dict, holders: dict, chunks_of, ref, truncated: dict,
         context: list) -> dict:
    """Why a needle query (its needle ``text``) missed the context at the budget: where the needle's chunk
    ranked (and the context up to it), or that no chunk holds it and why: the cut destroyed it, or the chunk
    that holds it is longer than the encoder's window (with where in it the needle lies)."""
    strategy, model, needle = row["strategy"], row["model"], row["needle_id"]
    why: dict = {}
    if row["hit_rank"]:
        why["kind"] = "over_budget"
        why["tokens"] = context[row["hit_rank"] - 1] if len(context) >= row["hit_rank"] else None
    elif row["model"] == EXTERNAL_MODEL:
        why["kind"] = "not_returned"
    elif needle in destroyed.get(strategy, set()):
        why["kind"] = "destroyed"
    else:
        chunks_of(strategy)
        held = sorted(holders.get(strategy, {}).get(needle, set()))
        why["kind"] = "not_in_list"
        why["depth"] = len(row["chunk_ids"] or [])
        if held:
            why["holder"] = ref(strategy, held[0], needle)
        if (model, strategy) not in truncated:
            truncated[(model, strategy)] = data.truncated(model, strategy) if model != "bm25" else {}
        long = [c for c in held if c in truncated[(model, strategy)]]
        if long:
            chunk = chunks_of(strategy)[long[0]]
            place = locate(chunk["content"], text)
            share = place[0] / max(len(chunk["content"]), 1) if place else None
            why |= {"truncated": long[0], "tokens": truncated[(model, strategy)][long[0]],
                    "at": round(share, 3) if share is not None else None}
    return why


def _decision(data: PageData, configurations: list[dict], values: dict[str, dict[str, list[float]]],
              needles: list[str]) -> dict:
    """The pick, the runner-up, the margin between them with its interval over needles and the adjusted test,
    and the field's questions with their adjusted p."""
    competing = sorted((c for c in configurations if c["rank"] is not None), key=lambda c: c["rank"])
    tests = paired_comparisons(data.connection).to_pylist() if table_exists(data.connection, "comparisons") else []
    alpha = data.decision.get("alpha") or 0.05
    differences = [t for t in tests if t["family"] in DIFFERENCE_FAMILIES]  # non-inferiority is counted apart
    out: dict = {"pick": competing[0]["key"] if competing else None,
                 "runner_up": competing[1]["key"] if len(competing) > 1 else None,
                 "competing": len(competing), "not_competing": sum(1 for c in configurations
                                                                    if c["rank"] is None and not c["external"]),
                 "tests": len(differences), "significant": sum(1 for t in differences if t["p_adjusted"] is not None
                                                               and t["p_adjusted"] < alpha),
                 "significant_raw": sum(1 for t in differences if t["p_value"] is not None and t["p_value"] < alpha),
                 "non_inferiority_tests": len(tests) - len(differences),
                 # the tie with the runner-up and how it was broken, the cheaper equivalent (or why none), and what
                 # the needles can tell: the lines `evaluate` prints under the pick
                 "choice": choice_lines(data.decision)}
    if out["pick"] and out["runner_up"]:
        a = {n: sum(v) / len(v) for n, v in values.get(out["pick"], {}).items()}
        b = {n: sum(v) / len(v) for n, v in values.get(out["runner_up"], {}).items()}
        shared = [n for n in needles if n in a and n in b]
        margin, low, high = _mean_difference_interval([a[n] for n in shared], [b[n] for n in shared])
        second = competing[1]
        test = next((t for t in tests if t["family"] == "verdict" and
                     (t["b_model"], t["b_strategy"], t["b_retriever"]) ==
                     (second["model"], second["strategy"], second["retriever"])), None)
        out["margin"] = {"value": margin, "low": low, "high": high, "needles": len(shared)}
        out["test"] = test
        out["equal"] = [key_of(t["b_model"], t["b_strategy"], t["b_retriever"]) for t in tests
                        if t["family"] == "verdict" and t["p_adjusted"] is not None and t["p_adjusted"] >= alpha]
    asked = {question.key: question for question in QUESTIONS}
    out["questions"] = []
    for test in tests:
        if test["family"] == "question" and test["comparison"] in asked:
            question = asked[test["comparison"]]
            a, b = ((test["a_strategy"], test["b_strategy"]) if question.by == "strategy"
                    else (test["a_retriever"], test["b_retriever"]))
            out["questions"].append(test | {"asks": question.asks[0].upper() + question.asks[1:], "a": a, "b": b})
        elif test["family"] == "external":
            out["questions"].append(test | {"asks": "An external retriever against the pick:",
                                            "a": test["a_strategy"], "b": "the pick"})
    return out


def _refusal(data: PageData, decision: dict) -> dict:
    """The pick's refusal trade-off: answered with the needle and bluffs against the cut, for the retriever whose
    distance it refuses on, and the suggested cut."""
    if not decision.get("pick") or not table_exists(data.connection, "threshold_sweep"):
        return {}
    model, strategy, retriever = decision["pick"].split("|")
    try:
        gate = gate_of(retriever)
    except ValueError:
        return {"lines": [f"{name_of((model, strategy, retriever))} cannot refuse: {retriever} has no distance"]}
    rows = _rows(data.connection, "SELECT cut, in_domain, out_of_domain, answered_with_needle, bluffs, suggested "
                                  "FROM threshold_sweep WHERE model = ? AND strategy = ? AND retriever = ? ORDER BY cut",
                 [model, strategy, gate])
    return {"gate": gate, "points": rows, "lines": refusal_lines(data.connection, (model, strategy, retriever))}
