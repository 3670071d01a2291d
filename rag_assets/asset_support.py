"""Small helpers the assets share: content-versioned outputs, the Parquet of a check's partition, and
lib figures as metadata."""

import hashlib
import warnings
from pathlib import Path

import pyarrow as pa
from dagster import (
    BetaWarning,
    DataVersion,
    MetadataValue,
    Output,
    TableColumn,
    TableRecord,
    TableSchema,
)

from rag_assets.lib.store import paths
from rag_assets.partitions import dimensions_of, model_strategy_partitions


def versioned_output(value, version: str, metadata: dict) -> Output:
    """An output whose data version is the hash of its content, so an unchanged input stales nothing."""
    with warnings.catch_warnings():  # data_version is beta, and it is exactly what is needed here
        warnings.simplefilter("ignore", BetaWarning)
        return Output(value, data_version=DataVersion(version), metadata=metadata)


def preview_table(rows: list[dict]) -> MetadataValue:
    """A few rows as a Dagster table preview (the columns of the first row, typed from its values)."""
    names = list(rows[0]) if rows else []
    kinds = {bool: "bool", int: "int", float: "float"}
    columns = [TableColumn(name, kinds.get(type(rows[0][name]), "string")) for name in names]
    records = [TableRecord({k: v if isinstance(v, (bool, int, float)) or v is None else str(v) for k, v in row.items()})
               for row in rows]
    return MetadataValue.table(records=records, schema=TableSchema(columns=columns))


# Dagster's UI (1.13.27) shows a Markdown entry of fewer than 1,000 characters inline, and its metadata table gives
# the Value column of every row the width of the widest entry: one inline table of 13 columns (chunk_stats on a
# small project) pushed the decision's first line past the edge of a 1280-pixel screen.
INLINE_MARKDOWN_LIMIT = 1000


def markdown_table(markdown: str) -> MetadataValue:
    """A Markdown table as a metadata entry the UI never shows inline: behind its "[Show Markdown]" link (a dialog
    that scrolls), however few its rows, so the entries beside it keep the width of the screen. The padding is
    trailing newlines, which Markdown renders as nothing."""
    return MetadataValue.md(markdown.rstrip("\n") + "\n" * max(1, INLINE_MARKDOWN_LIMIT - len(markdown.rstrip("\n"))))


def table_version(table: pa.Table) -> str:
    """A content hash of a table (schema and rows): the same rows give the same data version."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table.combine_chunks())
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()[:16]


def partition_tables(context, home: str, asset: str) -> list[tuple[str, pa.Table]]:
    """(partition label, table) of a model x strategy asset: the run's partition, or every materialised one.

    A check on a partitioned asset cannot load "its" partition as an input (Dagster would load
    every partition), so it reads the file of the run's partition itself; run without a partition
    (from the UI's check button), it reads every materialised partition.
    """
    op = context.op_execution_context
    if op.has_partition_key:
        key = op.partition_key
        dimensions = dimensions_of(model_strategy_partitions, key)
        return [(str(key), paths.read_stored(paths.stored_partition(Path(home), asset, dimensions), asset, dimensions))]
    root = paths.parquet_root(Path(home)) / asset
    return [(str(path.parent.relative_to(root)), paths.read_stored(path, asset, paths.dimensions_of_path(
        Path(home), asset, path))) for path in paths.partition_files(Path(home), asset)]


def as_metadata(figures: dict) -> dict:
    """A lib function's figures as Dagster metadata: dicts and lists as JSON, the rest as they are."""
    return {key: MetadataValue.json(value) if isinstance(value, (dict, list)) else value
            for key, value in figures.items()}


def snapshot_of(corpus_snapshot: pa.Table) -> dict:
    """The stamp fields a corpus snapshot pins: {"snapshot_id": ...}."""
    return {"snapshot_id": corpus_snapshot.column("snapshot_id")[0].as_py() if len(corpus_snapshot) else None}
