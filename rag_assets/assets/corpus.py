"""The corpus stage: the document folder as observed from outside, and its snapshot (a manifest of files)."""

import warnings
from dataclasses import asdict
from pathlib import Path

import pyarrow as pa
from dagster import (
    BetaWarning,
    DataVersion,
    Failure,
    MetadataValue,
    ObserveResult,
    Output,
    asset,
    observable_source_asset,
)

from rag_assets.asset_support import versioned_output
from rag_assets.automation import REBUILD_CORPUS
from rag_assets.lib.ingest.corpus import UNSUPPORTED, project_inputs, scan_corpus, snapshot_id
from rag_assets.lib.ingest.documents import corpus_refusal
from rag_assets.lib.store.schemas import CORPUS_SNAPSHOT, table_from_rows
from rag_assets.resources import RagSettings


def scan(folder: Path, settings: RagSettings, skipped: dict[str, str]):
    """The corpus folder's files, without the evaluation's own (its needle file, its storage folder...)."""
    return scan_corpus(folder, skipped, project_inputs(settings.eval_set, settings.out_of_domain, settings.models_file,
                                                       settings.retrievers_file, settings.home))


with warnings.catch_warnings():  # observable source assets are beta, and exactly what is needed here
    warnings.simplefilter("ignore", BetaWarning)

    @observable_source_asset(
        group_name="corpus",
        description="The document folder as Dagster sees it from outside: its data version is the snapshot id "
        "(sha256 over every file's path and bytes). Observe it after editing the folder: a new version shows "
        "corpus_snapshot stale.")
    def corpus_folder(settings: RagSettings) -> ObserveResult:
        """The document folder as Dagster sees it from outside: its version is the snapshot id.

        Observing it (the input_observation schedule, or "Observe" in the UI) after a file changed
        gives a new version, and corpus_snapshot shows as stale.
        """
        folder = Path(settings.corpus_dir).resolve()
        skipped: dict[str, str] = {}
        entries = scan(folder, settings, skipped)
        return ObserveResult(
            data_version=DataVersion(snapshot_id(entries)),
            metadata={"corpus_dir": MetadataValue.path(str(folder)), "files": len(entries),
                      "skipped": MetadataValue.json(skipped)},
        )


@asset(group_name="corpus", deps=[corpus_folder], automation_condition=REBUILD_CORPUS, kinds={"python", "parquet"})
def corpus_snapshot(context, settings: RagSettings) -> Output[pa.Table]:
    """Manifest of the corpus folder: one row per file with size, sha256 and format.

    Its data version is the snapshot id, so an unchanged folder leaves everything downstream fresh.
    """
    folder = Path(settings.corpus_dir).resolve()
    skipped: dict[str, str] = {}
    entries = scan(folder, settings, skipped)
    for path, reason in sorted(skipped.items()):
        context.log.warning(f"corpus: skipped {path}: {reason}")
    refusal = corpus_refusal(folder, entries, settings.max_document_bytes)
    if refusal:  # refused before it is written: the last good snapshot stays
        raise Failure(description=refusal)
    snapshot = snapshot_id(entries)
    rows = [asdict(entry) | {"corpus_dir": str(folder), "snapshot_id": snapshot} for entry in entries]
    formats: dict[str, int] = {}
    for entry in entries:
        formats[entry.format] = formats.get(entry.format, 0) + 1
    return versioned_output(
        table_from_rows(CORPUS_SNAPSHOT, rows, "corpus_snapshot"),
        snapshot,
        {
            "snapshot_id": snapshot,
            "corpus_dir": MetadataValue.path(str(folder)),
            "files": len(entries),
            "unsupported_files": formats.get(UNSUPPORTED, 0),
            "skipped": MetadataValue.json(skipped),
            "bytes": sum(entry.size for entry in entries),
            "formats": MetadataValue.json(formats),
        },
    )
