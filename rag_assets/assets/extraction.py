"""The extraction stage: one canonical text per document; a broken document is a failed row with its reason."""

from pathlib import Path

import pyarrow as pa
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    Failure,
    MetadataValue,
    Output,
    asset,
    asset_check,
)

from rag_assets.asset_support import markdown_table, table_version, versioned_output
from rag_assets.automation import REBUILD_CORPUS
from rag_assets.lib.ingest.documents import (
    extract_entry,
    extraction_summary,
    nothing_extracted,
    tree_configuration,
)
from rag_assets.lib.ingest.extraction import EXTRACTOR_VERSION
from rag_assets.lib.store.schemas import EXTRACTED_TEXT, table_from_rows
from rag_assets.resources import RagSettings


def extraction_code_version(run_tree_code: bool) -> str:
    """``extracted_text``'s code version: the extractor's, and whether a tree's code runs (a different text)."""
    return f"{EXTRACTOR_VERSION}-tree-code" if run_tree_code else EXTRACTOR_VERSION


@asset(group_name="corpus", automation_condition=REBUILD_CORPUS, kinds={"python", "parquet"},
       code_version=EXTRACTOR_VERSION)
def extracted_text(settings: RagSettings, corpus_snapshot: pa.Table) -> Output[pa.Table]:
    """Canonical text and sections per document; a broken document is a failed row with its reason."""
    rows = [
        row | {"snapshot_id": entry["snapshot_id"]}
        for entry in corpus_snapshot.to_pylist()
        for row in extract_entry(Path(entry["corpus_dir"]), entry["path"], entry["format"], entry["sha256"],
                                 settings.max_document_bytes, settings.run_tree_code)
    ]
    summary = extraction_summary(rows)
    problem = nothing_extracted(summary, settings.corpus_dir)
    if problem:
        raise Failure(description=problem)
    table = table_from_rows(EXTRACTED_TEXT, rows, "extracted_text")
    return versioned_output(table, table_version(table), metadata=extraction_metadata(
        summary, *tree_configuration(corpus_snapshot.to_pylist(), Path(settings.corpus_dir), settings.run_tree_code)))


def extraction_metadata(summary: dict, trees: list[dict], configuration: dict[str, str]) -> dict:
    """``extracted_text``'s metadata: the counts, the failures, the largest and least faithful documents, the
    trees' configurations the documents were read with (one above the corpus folder shows as ../), the
    configuration files the corpus holds (listed, not documents) and autodoc's directives left without text."""
    return {
        "documents": summary["documents"],
        "documents_ok": summary["ok"],
        "documents_failed": summary["failed"],
        "documents_generated": MetadataValue.json(summary["generated"]),
        "failed": MetadataValue.json(summary["failures"]),
        "characters": summary["characters"],
        "sections": summary["sections"],
        "formats": MetadataValue.json(summary["formats"]),
        "largest_documents": markdown_table(summary["largest_table"]),
        "source_syntax_lines": summary["syntax_lines"], "unknown_constructs": summary["unknown_constructs"],
        "trees": MetadataValue.json(trees),
        "configuration_files": MetadataValue.json(configuration),
        "generated_from_code": summary["from_code"],
        "least_faithful": markdown_table(summary["fidelity_table"]) if summary["fidelity_table"]
        else MetadataValue.md("every document renders without source syntax"),
    }


@asset_check(asset=extracted_text, description="Warns when any document failed extraction, naming each.")
def every_document_extracted(extracted_text: pa.Table) -> AssetCheckResult:
    failures = {r["doc_id"]: r["error"] for r in extracted_text.to_pylist() if r["status"] == "failed"}
    return AssetCheckResult(
        passed=not failures,
        severity=AssetCheckSeverity.WARN,
        description="; ".join(f"{doc}: {error}" for doc, error in failures.items()) or "all documents extracted",
        metadata={"failed": len(failures), "documents": extracted_text.num_rows},
    )


@asset_check(asset=extracted_text, description="Warns when a document's canonical text still carries source syntax "
             "(roles, directive lines, fences, attribute lists, include markers), naming each.")
def no_source_syntax_left(extracted_text: pa.Table) -> AssetCheckResult:
    left = {r["doc_id"]: r["syntax_lines"] for r in extracted_text.to_pylist() if r["status"] == "ok" and r["syntax_lines"]}
    return AssetCheckResult(
        passed=not left, severity=AssetCheckSeverity.WARN,
        description="; ".join(f"{doc}: {lines} lines" for doc, lines in sorted(left.items(), key=lambda i: -i[1])[:20])
        or "no line of any document carries source syntax",
        metadata={"documents_with_syntax": len(left), "lines": sum(left.values())},
    )
