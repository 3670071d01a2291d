from pathlib import Path

import pyarrow as pa
from dagster import MetadataValue, Output, asset

from rag_assets.lib.extraction import extract_file

MAX_DOCUMENT_BYTES = 50 * 1024 * 1024


@asset(group_name="corpus")
def extracted_text(corpus_snapshot: pa.Table) -> Output[pa.Table]:
    """Canonical text and sections per document; a broken document is a failed row with its reason."""
    rows = []
    for entry in corpus_snapshot.to_pylist():
        row = extract_file(
            Path(entry["corpus_dir"]), entry["path"], entry["format"], entry["sha256"], MAX_DOCUMENT_BYTES
        )
        rows.append(row | {"snapshot_id": entry["snapshot_id"]})
    ok = [row for row in rows if row["status"] == "ok"]
    failed = {row["doc_id"]: row["error"] for row in rows if row["status"] == "failed"}
    return Output(
        pa.Table.from_pylist(rows),
        metadata={
            "documents": len(rows),
            "documents_ok": len(ok),
            "documents_failed": len(failed),
            "failed": MetadataValue.json(failed),
            "characters": sum(len(row["text"]) for row in ok),
            "sections": sum(len(row["sections"]) for row in ok),
        },
    )
