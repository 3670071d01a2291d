"""The corpus's documents as the graph extracts them, for the needle commands (suggest, check, label)."""

from __future__ import annotations

from pathlib import Path

from rag_assets.lib.store import paths


def corpus_documents(corpus: Path, home: Path) -> dict[str, tuple[str, list[dict]]]:
    """The corpus's documents as the graph extracts them (``documents.corpus_documents``), reusing the home's
    stored ``extracted_text`` when it is current."""
    from rag_assets.lib.ingest.documents import corpus_documents as extracted
    from rag_assets.settings import current

    paths.keep_scratch_in(home)  # Sphinx's builds and the models' files in the storage folder, not the system's

    evaluation = current().evaluation
    return extracted(corpus, paths.partition_path(home, "extracted_text"), evaluation.max_document_bytes,
                     evaluation.run_tree_code)
