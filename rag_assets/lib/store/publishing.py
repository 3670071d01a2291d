"""Evaluation runs published where the team's data lives: PostgreSQL, SQLite or MySQL/MariaDB, by a
SQLAlchemy-style URL (``postgresql://``, ``sqlite:///``, ``mysql://``; the setting ``publish.url``).

``metrics.duckdb`` stays the evaluation's own record; publishing copies each of its runs that the team's
database does not hold yet, one transaction per run, into tables named with a prefix (``rag_``):

- ``rag_evaluation_runs``: the run (its time, Dagster run, evaluation set, snapshot, stamps, settings);
- ``rag_retrieval_results``: one row per query and configuration, ``hit_rank`` NULL for a miss, with the
  configuration, the stamps, the latency, the returned chunk ids (JSON text) and the context tokens;
- ``rag_metrics``: every measure with its interval, per model, revision, strategy, retriever and phrasing;
- with the newest run only (DuckDB keeps these for its newest run alone): ``rag_comparisons`` (the paired
  tests, adjusted), ``rag_decision`` and ``rag_ranking`` (the verdict) and ``rag_refusal_cuts``.

A run already there (its row in ``rag_evaluation_runs``, written last) is not written again: publishing is
idempotent by run id, and a run whose transaction failed is written whole by the next publish. Nothing
is deleted from the team's database: several projects may publish into one.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa

from rag_assets.lib.store.team_database import masked_url, scrubbed, secrets_of

DEFAULT_PREFIX = "rag_"
RUNS = "evaluation_runs"
# the columns of retrieval_results copied (scalars, and lists as JSON text)
RESULT_COLUMNS = ("query_id", "needle_id", "phrasing", "query_kind", "kind", "model", "revision", "dimension",
                  "strategy", "retriever", "pipeline_version", "extractor_version", "snapshot_id", "eval_version",
                  "eval_hash", "hit_rank", "relevant_total", "latency_ms", "chunk_ids", "context_tokens")
# {published table: (DuckDB table or view, the columns copied (None: all), whether it holds every run (by
# run_id) or only the newest's rows)}
SOURCES: dict[str, tuple[str, tuple[str, ...] | None, bool]] = {
    "retrieval_results": ("retrieval_results", ("run_id", *RESULT_COLUMNS), True),
    "metrics": ("metrics_history", None, True),
    "comparisons": ("comparisons", None, False),
    "decision": ("decision", None, False),
    "ranking": ("ranking", None, False),
    "refusal_cuts": ("suggested_cuts", None, False),
}
KEY_LENGTH = 255  # text columns MySQL must index or compare (run_id and the configuration's names)


class PublishError(RuntimeError):
    """The team's database could not take the runs: names it (password hidden) and the cause."""


@dataclass
class Published:
    target: str  # the URL, password hidden
    runs: list[str] = field(default_factory=list)  # run ids written now
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows written now
    already: int = 0  # runs the database held before


def engine_url(url: str) -> str:
    """The SQLAlchemy URL of a ``publish.url``: ``mysql://`` and ``mariadb://`` through PyMySQL (the pure-Python
    driver this project installs), ``postgresql://`` (or ``postgres://``) through psycopg2 (the postgres extra,
    as Dagster's PostgreSQL storage); others as given."""
    for scheme in ("mysql://", "mariadb://"):
        if url.startswith(scheme):
            url = "mysql+pymysql://" + url[len(scheme):]
    if url.startswith("mysql+pymysql://") and "charset=" not in url:
        url += ("&" if "?" in url else "?") + "charset=utf8mb4"
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            url = "postgresql+psycopg2://" + url[len(scheme):]
    return url


def _column_type(arrow_type: pa.DataType, name: str):
    import sqlalchemy as sa
    from sqlalchemy.dialects import mysql

    if pa.types.is_boolean(arrow_type):
        return sa.Boolean()
    if pa.types.is_integer(arrow_type):
        return sa.BigInteger()
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return sa.Double()
    if pa.types.is_timestamp(arrow_type):
        return sa.DateTime()
    if name in ("run_id", "source", "model", "revision", "strategy", "retriever", "phrasing", "query_id"):
        return sa.String(KEY_LENGTH)
    return sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")


def _value(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return value


def _table(metadata, name: str, schema: pa.Schema):
    import sqlalchemy as sa

    return sa.Table(name, metadata, *[sa.Column(f.name, _column_type(f.type, f.name)) for f in schema],
                    mysql_charset="utf8mb4")


def _ensure(connection, table) -> None:
    """Create ``table``, or add the columns it lacks (a later version's): the rows of every version stay."""
    import sqlalchemy as sa

    inspector = sa.inspect(connection)
    if not inspector.has_table(table.name):
        table.create(connection)
        return
    present = {column["name"] for column in inspector.get_columns(table.name)}
    for column in table.columns:
        if column.name not in present:
            kind = column.type.compile(dialect=connection.dialect)
            connection.execute(sa.text(f'ALTER TABLE {table.name} ADD COLUMN {connection.dialect.identifier_preparer.quote(column.name)} {kind}'))


def published_runs(connection, prefix: str) -> set[str]:
    import sqlalchemy as sa

    if not sa.inspect(connection).has_table(prefix + RUNS):
        return set()
    return {row[0] for row in connection.execute(sa.text(f"SELECT run_id FROM {prefix}{RUNS}"))}


def run_tables(duck, run_id: str, newest: bool) -> dict[str, pa.Table]:
    """{table: rows} of one run from DuckDB (``duck``, read-only), the run's own row last. A column a run
    recorded before it existed is left out (``retrieval_results`` of an older version)."""
    found = {}
    for name, (source, wanted, every_run) in SOURCES.items():
        present = [row[0] for row in duck.execute("SELECT column_name FROM information_schema.columns WHERE "
                                                  "table_name = ? ORDER BY ordinal_position", [source]).fetchall()]
        if not present or (not every_run and not newest):
            continue
        columns = ", ".join(f'"{column}"' for column in present if wanted is None or column in wanted)
        if every_run:
            found[name] = duck.sql(f"SELECT {columns} FROM {source} WHERE run_id = ?", params=[run_id]).to_arrow_table()
        else:
            rows = duck.sql(f"SELECT {columns} FROM {source}").to_arrow_table()
            found[name] = rows.add_column(0, "run_id", pa.array([run_id] * rows.num_rows, pa.string()))
    found[RUNS] = duck.sql("SELECT * FROM evaluation_runs WHERE run_id = ?", params=[run_id]).to_arrow_table()
    return found


@contextmanager
def _engine(url: str, what: str):
    """A SQLAlchemy engine for ``url`` (``engine_url``), disposed after; any error of its driver or of SQLAlchemy
    raised as one PublishError line: ``what`` (publishing, publishing traces), the URL masked, the cause."""
    import sqlalchemy as sa

    try:
        engine = sa.create_engine(engine_url(url), future=True)
    except (sa.exc.ArgumentError, ImportError, ValueError) as error:
        hint = " (pip install 'rag-assets[postgres]')" if isinstance(error, ImportError) and "psycopg" in str(error) else ""
        cause = scrubbed(str(error).splitlines()[0] if str(error) else type(error).__name__, secrets_of(url))
        raise PublishError(f"publish.url {masked_url(url)}: {cause}{hint}") from None
    try:
        yield engine
    except sa.exc.SQLAlchemyError as error:
        cause = getattr(error, "orig", None) or error
        said = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        raise PublishError(f"{what} to {masked_url(url)}: {scrubbed(said, secrets_of(url))}") from None
    finally:
        engine.dispose()


def publish(database: Path, url: str, prefix: str = DEFAULT_PREFIX, batch: int = 5000) -> Published:
    """Every evaluation run of ``database`` (``metrics.duckdb``) that the database at ``url`` does not hold
    yet, oldest first, each in one transaction. PublishError names the database and the cause."""
    from rag_assets.lib.store.database import read_only

    published = Published(masked_url(url))
    with _engine(url, "publishing") as engine:
        with engine.connect() as connection:
            held = published_runs(connection, prefix)
        with read_only(database) as duck:
            runs = [row[0] for row in duck.sql("SELECT run_id FROM evaluation_runs ORDER BY created_at, run_id").fetchall()]
            newest = runs[-1] if runs else None
            published.already = len(set(runs) & held)
            for run_id in [run for run in runs if run not in held]:
                tables = run_tables(duck, run_id, run_id == newest)
                with engine.begin() as connection:  # one transaction: the run whole, or not at all
                    for name, rows in tables.items():
                        _write(connection, prefix + name, rows, run_id, batch)
                        published.rows[name] = published.rows.get(name, 0) + rows.num_rows
                published.runs.append(run_id)
    return published


def _write(connection, name: str, rows: pa.Table, run_id: str, batch: int) -> None:
    import sqlalchemy as sa

    table = _table(sa.MetaData(), name, rows.schema)
    _ensure(connection, table)
    connection.execute(table.delete().where(table.c.run_id == run_id))  # a half-written run of an older version
    records = [{key: _value(value) for key, value in record.items()} for record in rows.to_pylist()]
    for start in range(0, len(records), batch):
        connection.execute(table.insert(), records[start:start + batch])


def describe(published: Published, names: Sequence[str] = ("retrieval_results", "metrics")) -> str:
    if not published.runs:
        return f"published to {published.target}: nothing new ({published.already} runs already there)"
    counts = ", ".join(f"{published.rows.get(name, 0):,} {name.replace('_', ' ')} rows" for name in names)
    return f"published {len(published.runs)} evaluation run(s) to {published.target}: {counts}"


TRACES = "ask_traces"


def trace_rows(traces: Path, source: str, after) -> list[dict]:
    """The traces of ``traces`` (``traces.duckdb``) asked after ``after`` (None: all), in the lesson's shape:
    when, the question, the configuration, the retrieved chunk ids best first, those sent within the budget,
    those the verified answer cited (NULL: not verified), whether it refused, its latency; ``source`` says
    which storage folder they come from."""
    import duckdb

    with duckdb.connect(str(traces), read_only=True) as connection:
        rows = connection.sql(
            "SELECT asked_at, question, model, revision, strategy, retriever, refused, retrieved, sources, cited, "
            "latency_ms FROM ask_traces WHERE $after IS NULL OR asked_at > $after ORDER BY asked_at",
            params={"after": after}).to_arrow_table().to_pylist()
    made = []
    for row in rows:
        by_number = {source_row["number"]: source_row["chunk_id"] for source_row in row["sources"] or []}
        made.append({"source": source, "asked_at": row["asked_at"], "question": row["question"], "model": row["model"],
                     "revision": row["revision"], "strategy": row["strategy"], "retriever": row["retriever"],
                     "refused": row["refused"],
                     "retrieved_ids": json.dumps([entry["chunk_id"] for entry in row["retrieved"] or []]),
                     "sent_ids": json.dumps(list(by_number.values())),
                     "cited_ids": None if row["cited"] is None else json.dumps(
                         [by_number[number] for number in row["cited"] if number in by_number]),
                     "latency_ms": row["latency_ms"]})
    return made


def publish_traces(traces: Path, url: str, source: str, prefix: str = DEFAULT_PREFIX) -> int:
    """The traces of ``traces`` the database at ``url`` does not hold yet (newer than the newest it holds from
    ``source``: a trace that could not be written is written by the next ask that can), appended to
    ``<prefix>ask_traces``; how many. PublishError names the database and the cause."""
    import sqlalchemy as sa

    schema = pa.schema([("source", pa.string()), ("asked_at", pa.timestamp("us")), ("question", pa.string()),
                        ("model", pa.string()), ("revision", pa.string()), ("strategy", pa.string()),
                        ("retriever", pa.string()), ("refused", pa.bool_()), ("retrieved_ids", pa.string()),
                        ("sent_ids", pa.string()), ("cited_ids", pa.string()), ("latency_ms", pa.float64())])
    table = _table(sa.MetaData(), prefix + TRACES, schema)
    with _engine(url, "publishing traces") as engine, engine.begin() as connection:
        _ensure(connection, table)
        newest = connection.execute(sa.select(sa.func.max(table.c.asked_at)).where(table.c.source == source)).scalar()
        rows = trace_rows(traces, source, newest)
        if rows:
            connection.execute(table.insert(), rows)
    return len(rows)
