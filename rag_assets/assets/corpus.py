import warnings
from dataclasses import asdict
from pathlib import Path

import pyarrow as pa
from dagster import BetaWarning, DataVersion, MetadataValue, Output, asset

from rag_assets.lib.corpus import UNSUPPORTED, scan_corpus, snapshot_id
from rag_assets.resources import RagSettings


@asset(group_name="corpus")
def corpus_snapshot(settings: RagSettings) -> Output[pa.Table]:
    """Manifest of the corpus folder: one row per file with size, sha256 and format.

    Its data version is the snapshot id, so an unchanged folder leaves everything downstream fresh.
    """
    folder = Path(settings.corpus_dir).resolve()
    entries = scan_corpus(folder)
    snapshot = snapshot_id(entries)
    rows = [asdict(entry) | {"corpus_dir": str(folder), "snapshot_id": snapshot} for entry in entries]
    table = pa.Table.from_pylist(rows)
    formats: dict[str, int] = {}
    for entry in entries:
        formats[entry.format] = formats.get(entry.format, 0) + 1
    with warnings.catch_warnings():  # data_version is beta, and it is exactly what this asset needs
        warnings.simplefilter("ignore", BetaWarning)
        output = Output(
            table,
            data_version=DataVersion(snapshot),
            metadata={
                "snapshot_id": snapshot,
                "corpus_dir": MetadataValue.path(str(folder)),
                "files": len(entries),
                "unsupported_files": formats.get(UNSUPPORTED, 0),
                "bytes": sum(entry.size for entry in entries),
                "formats": MetadataValue.json(formats),
            },
        )
    return output
