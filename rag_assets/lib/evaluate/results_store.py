"""One evaluation run into DuckDB: every materialised retrieval partition from Parquet, appended to
the history, with each strategy's costs and the paired comparisons.

Parquet is the source of truth; DuckDB holds what is computed from it (see ``metrics``).
"""

from __future__ import annotations

import os
import re
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection, Iterator

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rag_assets.lib.embed.partition import embedding_rate
from rag_assets.lib.evaluate.comparisons import write_comparisons
from rag_assets.lib.evaluate.decision import DecisionRule, write_decision
from rag_assets.lib.evaluate.measures import (
    comparison,
    write_chunk_stats,
    write_results,
    write_threshold_sweep,
)
from rag_assets.lib.evaluate.needle_changes import (
    stored_changes,
    stored_needles,
    write_needle_changes,
    write_run_needles,
)
from rag_assets.lib.evaluate.size_view import write_size_view, write_strategies
from rag_assets.lib.evaluate.verdict import decision_summary, verdict
from rag_assets.lib.store.database import DamagedDatabase, damage_of, keep_previous, previous_of, read_only, set_aside
from rag_assets.lib.store.object_store import object_store
from rag_assets.lib.store.paths import (
    check_readable,
    dimensions_of_path,
    full_disk_named,
    parquet_root,
    partition_files,
    pid_alive,
    publish,
    stored_file,
)
from rag_assets.lib.store.schemas import RESULT_COLUMNS, STAMP_FIELDS, TOKEN_COLUMNS


@dataclass
class Evaluation:
    run_id: str
    rows: int  # retrieval rows appended
    table: pa.Table  # the comparison by model, strategy and retriever
    paired: pa.Table  # the paired comparisons
    costs: pa.Table  # chunk_stats
    configurations: list[tuple[str, str]]  # (model, strategy) of the newest run
    cuts: pa.Table | None  # suggested_cuts, when a refusal calibration was materialised
    ranking: list[dict] = field(default_factory=list)  # every built-in configuration by the decision's rule
    rule: DecisionRule = field(default_factory=DecisionRule)
    verdict: str = ""  # the decision in words (``verdict.verdict``)
    decision: str = ""  # the decision in a few Markdown lines (``verdict.decision_summary``)
    warnings: list[str] = field(default_factory=list)  # a damaged file set aside, say


MODEL_ASSETS = ("embeddings", "retrieval_runs", "refusal_calibration")  # partitioned by model
EXTERNAL = "external_retriever"  # the dimension of an external retriever's partitions


def registered_files(home: Path, asset: str, registered: Collection[str] | None, dimension: str = "model"
                     ) -> list[Path]:
    """The partition files of ``asset``; with ``registered``, only those without ``dimension`` or whose key
    in it is registered (a model; an external retriever)."""
    return [file for file in partition_files(home, asset)
            if registered is None or dict(dimensions_of_path(home, asset, file)).get(dimension) in (None, *registered)]


def read_partitions(connection: duckdb.DuckDBPyConnection, home: Path, asset: str, columns: list[str],
                    registered: Collection[str] | None = None, dimension: str = "model") -> pa.Table:
    """Every materialised partition of ``asset``; with ``registered``, only those of the models (or the
    keys of ``dimension``) it names (``leftover_models`` names the other models)."""
    files = registered_files(home, asset, registered, dimension)
    if not files:
        raise FileNotFoundError(f"no partition of {asset} has been materialised yet")
    for file in files:  # a damaged file is named, with the command that rebuilds it, before DuckDB reads any
        check_readable(file, asset, dimensions_of_path(home, asset, file))
    return connection.read_parquet([str(f) for f in files], union_by_name=True).select(*columns).to_arrow_table()


def embedding_rates(home: Path, registered: Collection[str] | None = None) -> pa.Table:
    """(model, tokens_per_second): each model's embedding rate as its partitions carry it
    (``partition.measured_rate``), the one measured over the most tokens; a model none carries is absent."""
    best: dict[str, dict] = {}
    for file in registered_files(home, "embeddings", registered):
        rate = embedding_rate(file)
        column = pq.read_table(file, columns=["model"]).column(0) if rate else None
        if column is not None and len(column) and rate["tokens"] >= best.get(column[0].as_py(), {}).get("tokens", 0):
            best[column[0].as_py()] = rate
    return pa.table({"model": pa.array(list(best), pa.string()),
                     "tokens_per_second": pa.array([rate["tokens_per_second"] for rate in best.values()], pa.float64())})


def leftover_models(home: Path, registered: Collection[str]) -> dict[str, list[Path]]:
    """Model keys that have partition folders under the storage folder but no registry entry (a model
    registered once, through a registry file that is not set now), with their folders."""
    leftovers: dict[str, list[Path]] = {}
    for asset in MODEL_ASSETS:
        for file in partition_files(home, asset):
            model = dict(dimensions_of_path(home, asset, file)).get("model")
            if model is not None and model not in registered:
                folder = parquet_root(home) / asset / f"model={model}"
                if folder not in leftovers.setdefault(model, []):
                    leftovers[model].append(folder)
    return leftovers


def leftover_warning(leftovers: dict[str, list[Path]]) -> list[str]:
    """One warning line per leftover model: not evaluated, how to bring it back, how to remove it."""
    return [f"the partitions of {model} are not evaluated: it is not in the model registry now. Set the registry "
            f"file that registers it (RAG_ASSETS_MODELS_FILE) to evaluate it again, or remove them: rm -r "
            + " ".join(f"'{folder}'" for folder in folders) for model, folders in sorted(leftovers.items())]


def external_rows_beside(connection: duckdb.DuckDBPyConnection, home: Path, runs: pa.Table,
                         external: Collection[str]) -> pa.Table:
    """``runs`` with the rows of the registered external retrievers' partitions (same columns), so that
    the same tables and paired tests compare a team's retriever with the built-in configurations."""
    if not registered_files(home, "external_runs", external, EXTERNAL):
        return runs
    rows = read_partitions(connection, home, "external_runs", RESULT_COLUMNS, external, EXTERNAL)
    return pa.concat_tables([runs, rows.cast(runs.schema)])


def lexical_rows_beside(connection: duckdb.DuckDBPyConnection, home: Path, runs: pa.Table,
                        recorded: Collection[str] | None = None) -> pa.Table:
    """``runs`` with the rows of every materialised ``lexical_runs`` partition (BM25, once per strategy, under its
    own name in the model column); with ``recorded``, only those of the retrievers it names (a partition also
    ranks a retriever that is not evaluated but that an evaluated one builds on: BM25 for hybrid)."""
    if not partition_files(home, "lexical_runs"):
        return runs
    rows = read_partitions(connection, home, "lexical_runs", RESULT_COLUMNS)
    if recorded is not None:
        rows = rows.filter(pc.is_in(rows.column("retriever"), pa.array(list(recorded), pa.string())))
    return pa.concat_tables([runs, rows.cast(runs.schema)])


def external_sweeps(home: Path, external: Collection[str]) -> list[pa.Table]:
    """The refusal calibration of each registered external retriever that returns distances: the same
    sweep of cuts as the built-in retrievers' (``refusal_calibration``), computed from its rows."""
    import pyarrow.parquet as pq

    from rag_assets.lib.evaluate.refusal_calibration import calibrate_partition

    sweeps = []
    for file in registered_files(home, "external_runs", external, EXTERNAL):
        table = pq.read_table(file)
        if table.column("distances").null_count < len(table):
            sweep = calibrate_partition(table.filter(pc.is_valid(table.column("distances"))))[0]
            if len(sweep):
                sweeps.append(sweep)
    return sweeps


class RejectedEvaluation(Exception):
    """The partitions were not built from one consistent build: nothing was recorded."""


def record_evaluation(database: Path, home: Path, dagster_run_id: str | None = None,
                      stamp_check: Callable[[list[dict]], list[str]] | None = None,
                      registered: Collection[str] | None = None,
                      external: Collection[str] = (), rule: DecisionRule = DecisionRule(),
                      recorded: Collection[str] | None = None, run_settings: dict | None = None,
                      strategies: list[dict] | None = None) -> Evaluation:
    """Append every materialised retrieval partition as a new evaluation run, rebuild the views,
    ``chunk_stats``, the decision (``rule``: at which context budget, adjusted how) and ``comparisons``.
    The retrievers that use no embedding model come from ``lexical_runs``, once per strategy (with
    ``recorded``, those it names: the evaluated retrievers). ``run_settings`` (what the run was asked to do) is kept
    with the run, so that two runs can be compared by it.

    ``stamp_check`` gets the distinct stamps of the partitions before anything is written; if it
    names a problem, RejectedEvaluation is raised and the DuckDB file is not touched, so a run of
    mixed snapshots, pipelines or weights never becomes the latest result. With ``registered`` (the
    registry's keys), the partitions of other models are left out, each model named in one warning.
    """
    leftovers = leftover_models(home, registered) if registered is not None else {}
    with duckdb.connect() as scratch:
        runs = read_partitions(scratch, home, "retrieval_runs", RESULT_COLUMNS, registered)
        runs = lexical_rows_beside(scratch, home, runs, recorded)
        runs = external_rows_beside(scratch, home, runs, external)
        stamps = scratch.sql(f"SELECT DISTINCT {', '.join(STAMP_FIELDS)} FROM runs ORDER BY ALL").to_arrow_table()
        problems = stamp_check(stamps.to_pylist()) if stamp_check else []
        if problems:
            raise RejectedEvaluation("nothing was recorded: the materialised retrieval partitions do not come from "
                                     "one consistent build:\n" + "\n".join(problems))
    stored_file(home, database)  # the object store's copy, when one is configured, is the one appended to
    warnings = leftover_warning(leftovers) + set_aside(database)  # a damaged file is kept aside, and the history taken from the one before
    with replaced_atomically(database, home) as working, duckdb.connect(str(working)) as connection:
        first = runs.slice(0, 1).to_pylist()[0] if len(runs) else {}
        run_id = write_results(connection, runs, {"dagster_run_id": dagster_run_id,
                                                  "eval_version": first.get("eval_version"),
                                                  "eval_hash": first.get("eval_hash"),
                                                  "settings": run_settings}, rule.all_budgets)
        write_needle_changes(connection, run_id, stored_changes(home))
        write_run_needles(connection, run_id, stored_needles(home))
        write_chunk_stats(connection, read_partitions(connection, home, "embeddings", TOKEN_COLUMNS, registered),
                          read_partitions(connection, home, "chunk_quality", ["*"]), embedding_rates(home, registered))
        sweeps = [read_partitions(connection, home, "refusal_calibration", ["*"], registered)] \
            if registered_files(home, "refusal_calibration", registered) else []
        sweeps += external_sweeps(home, external)
        calibrated = bool(sweeps)
        if calibrated:
            write_threshold_sweep(connection, pa.concat_tables([s.select(sweeps[0].column_names) for s in sweeps]))
        if strategies is not None:
            write_strategies(connection, strategies)
        ranking = write_decision(connection, rule)
        write_size_view(connection, rule.budget)
        paired = write_comparisons(connection, ranking, rule)
        return Evaluation(
            run_id=run_id, rows=runs.num_rows, table=comparison(connection), paired=paired, ranking=ranking,
            rule=rule, verdict=verdict(connection, home), decision=decision_summary(connection),
            costs=connection.sql("SELECT * FROM chunk_stats").to_arrow_table(),
            configurations=connection.sql("SELECT DISTINCT model, strategy FROM latest_results ORDER BY ALL").fetchall(),
            cuts=connection.sql("SELECT * FROM suggested_cuts").to_arrow_table() if calibrated else None,
            warnings=warnings,
        )


@contextmanager
def replaced_atomically(database: Path, home: Path) -> Iterator[Path]:
    """A working copy of ``database`` beside it, written by the caller, then renamed over it (after
    it was uploaded, with an object store: ``publish``).

    Readers (read-only connections, ``rag-assets report``, the UI) keep reading the file they opened
    and never make the writer fail; a writer that fails (a full disk, a crash, Ctrl-C, a failed
    upload) leaves the database as it was, with nothing of its run recorded. One writer at a time is
    the caller's business (the ``duckdb_write`` pool).
    """
    database.parent.mkdir(parents=True, exist_ok=True)
    for stale in database.parent.glob(f".{database.name}.*.tmp*"):  # left by a writer that was killed
        writer = re.search(r"\.(\d+)\.tmp(\.wal)?$", stale.name)
        if writer and not pid_alive(int(writer.group(1))):
            stale.unlink(missing_ok=True)
    working = database.with_name(f".{database.name}.{os.getpid()}.tmp")
    written = False
    try:
        with full_disk_named(working):
            for source, target in ((database, working), (_wal(database), _wal(working))):
                if source.exists():
                    shutil.copyfile(source, target)
            yield working
            written = True
    finally:
        try:
            if written:
                _wal(working).unlink(missing_ok=True)  # the working copy was checkpointed when it closed
                keep_previous(database)  # the file replaced stays beside it: the history if this one is damaged
                publish(home, working, database)
                _wal(database).unlink(missing_ok=True)
        finally:
            working.unlink(missing_ok=True)  # gone when it was published; what a failed run left otherwise
            _wal(working).unlink(missing_ok=True)


def withdraw_run(database: Path, home: Path, dagster_run_id: str) -> list[str]:
    """Undo the evaluation ``dagster_run_id`` recorded when its run did not end in success after the file was
    renamed into place (its process killed at that moment, or stopped by a signal, or failed in a later
    step): the run is recorded failed, so its rows must not stay the current result. When the newest evaluation in
    ``database`` is that run's, the file is kept as ``metrics.duckdb.withdrawn-<run>`` and the file it
    replaced (``.previous``) is published in its place; with no whole earlier file, there is nothing
    current any more (the next evaluate rebuilds it). Returns what was done, one line each ([]: nothing)."""
    database = Path(database)
    if not database.exists() or damage_of(database) is not None:
        return []
    with read_only(database) as connection:
        newest = connection.sql("SELECT dagster_run_id FROM evaluation_runs ORDER BY created_at DESC, run_id DESC "
                                "LIMIT 1").fetchall()
    if not newest or newest[0][0] != dagster_run_id:
        return []
    withdrawn = database.with_name(f"{database.name}.withdrawn-{dagster_run_id[:8]}")
    shutil.copyfile(database, withdrawn)
    previous = previous_of(database)
    store = object_store(home)
    if previous.exists() and damage_of(previous) is None:
        staging = database.with_name(f".{database.name}.{os.getpid()}.tmp")
        shutil.copyfile(previous, staging)
        publish(home, staging, database)
        return [f"the evaluation of run {dagster_run_id[:8]}, which did not end in success, is withdrawn: "
                f"{database.name} is the file before it again (the withdrawn one is kept as {withdrawn.name})"]
    if store is not None:
        store.remove(database)
    database.unlink()
    return [f"the evaluation of run {dagster_run_id[:8]}, which did not end in success, is withdrawn (kept as "
            f"{withdrawn.name}); there was no earlier file, so `rag-assets evaluate` records the metrics again"]


def newest_evaluation_run(database: Path) -> str | None:
    """The Dagster run id of the newest evaluation in ``database`` (None: no file, a damaged one, no run)."""
    database = Path(database)
    if not database.exists():
        return None
    try:  # one small query, not a read of the whole file: every command asks this as it starts
        with read_only(database) as connection:
            newest = connection.sql("SELECT dagster_run_id FROM evaluation_runs ORDER BY created_at DESC, run_id DESC "
                                    "LIMIT 1").fetchall()
    except (DamagedDatabase, duckdb.Error):
        return None
    return newest[0][0] if newest else None


def withdraw_failed(database: Path, home: Path, failed: Callable[[str], bool], most: int = 3) -> list[str]:
    """Withdraw (``withdraw_run``) the newest evaluation while it is that of a run ``failed`` says ended
    without success (stopped by SIGTERM or Ctrl-C after the file was renamed into place, or recorded failed
    since): a run Dagster records failed never stays the current result. Returns what was done."""
    said: list[str] = []
    for _ in range(most):
        newest = newest_evaluation_run(database)
        if newest is None or not failed(newest):
            break
        done = withdraw_run(database, home, newest)
        if not done:
            break
        said += done
    return said


def _wal(database: Path) -> Path:
    return database.with_name(database.name + ".wal")

