"""Small helpers the assets share: content-versioned outputs, and the Parquet of a check's partition."""

import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from dagster import BetaWarning, DataVersion, Output

from rag_assets.lib import paths


def versioned_output(value, version: str, metadata: dict) -> Output:
    """An output whose data version is the hash of its content, so an unchanged input stales nothing."""
    with warnings.catch_warnings():  # data_version is beta, and it is exactly what is needed here
        warnings.simplefilter("ignore", BetaWarning)
        return Output(value, data_version=DataVersion(version), metadata=metadata)


def partition_tables(context, home: str, asset: str) -> list[tuple[str, pa.Table]]:
    """(partition label, table) for the run's partition, or for every materialised partition.

    A check on a partitioned asset cannot load "its" partition as an input (Dagster would load
    every partition), so it reads the file of the run's partition itself; run without a partition
    (from the UI's check button), it reads every materialised partition.
    """
    op = context.op_execution_context
    if op.has_partition_key:
        key = op.partition_key
        dimensions = sorted(key.keys_by_dimension.items()) if hasattr(key, "keys_by_dimension") else None
        path = paths.partition_path(Path(home), asset, dimensions)
        return [(str(key), pq.read_table(path))]
    root = paths.parquet_root(Path(home)) / asset
    return [(str(path.parent.relative_to(root)), pq.read_table(path)) for path in paths.partition_files(Path(home), asset)]
