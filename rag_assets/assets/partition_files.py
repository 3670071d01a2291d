"""Reading the Parquet of the partition an asset check runs for.

A check on a partitioned asset cannot load "its" partition as an input (Dagster would load every
partition), so it reads the file of the run's partition itself; run without a partition (from the
UI's check button), it reads every materialised partition.
"""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rag_assets.lib import paths


def partition_tables(context, home: str, asset: str) -> list[tuple[str, pa.Table]]:
    """(partition label, table) for the run's partition, or for every materialised partition."""
    op = context.op_execution_context
    if op.has_partition_key:
        key = op.partition_key
        dimensions = sorted(key.keys_by_dimension.items()) if hasattr(key, "keys_by_dimension") else None
        path = paths.partition_path(Path(home), asset, dimensions)
        return [(str(key), pq.read_table(path))]
    root = paths.parquet_root(Path(home)) / asset
    return [(str(path.parent.relative_to(root)), pq.read_table(path)) for path in paths.partition_files(Path(home), asset)]
