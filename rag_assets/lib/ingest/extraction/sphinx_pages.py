"""Pages Sphinx builds (``rag_assets.lib.ingest.sphinx_sources``), by the HTML rules without Sphinx's
navigation: a source file's page of a build of its tree (for Markdown and reStructuredText), and a page
already built, given as bytes.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rag_assets.lib.ingest.canonical import Extracted
from rag_assets.lib.ingest.doc_sources import SourceFile
from rag_assets.lib.ingest.extraction.base import ExtractionError, decode
from rag_assets.lib.ingest.extraction.html import extract_markup
from rag_assets.lib.ingest.sphinx_sources import SPHINX_CHROME, sphinx_build


def extract_sphinx_page(source: SourceFile, tree: Path | None, fallback_title: str,
                        conf: Path | None = None) -> Extracted:
    """A page of a Sphinx build of its tree (or of the corpus folder's reStructuredText without one), with the
    tree's ``conf`` read (or run, when ``source.run_tree_code``)."""
    root = Path(source.root).resolve()
    try:
        build = sphinx_build(tree, with_markdown=True, conf=conf, run_tree_code=source.run_tree_code,
                             corpus_root=root) if tree else sphinx_build(root, with_markdown=False, corpus_root=root)
    except Exception as error:  # noqa: BLE001 - Sphinx raises many types on a tree it cannot build
        raise ExtractionError(f"Sphinx could not build {tree or root}: {type(error).__name__}: {error}") from error
    page, docname = build.page((root / source.path).resolve())
    if not page.is_file():
        raise ExtractionError(f"Sphinx wrote no page for it (excluded by the tree, or unreadable): "
                              f"{_sphinx_problem(build.warnings, source.path)}")
    extracted = extract_markup(page.read_text(encoding="utf-8"), fallback_title, SPHINX_CHROME)
    return replace(extracted, unknown_constructs=build.unknown.get(docname, 0),
                   from_code=build.from_code.get(docname, 0))


def extract_sphinx_html(data: bytes, fallback_title: str, source: SourceFile | None = None) -> Extracted:
    """A page Sphinx built, by the HTML rules and without its navigation (a toctree's entries)."""
    return extract_markup(decode(data), fallback_title, SPHINX_CHROME)


def _sphinx_problem(warnings: str, path: str) -> str:
    own = [line for line in warnings.splitlines() if path in line]
    return own[0].strip() if own else "no warning names it"
