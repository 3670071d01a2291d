"""A corpus is what lies inside its folder: a symbolic link that leads outside it, and every directive or marker
that names a file outside it (or a URL), are refused and counted, never read."""

from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path

import pytest

from rag_assets.lib.ingest.corpus import scan_corpus
from rag_assets.lib.ingest.documents import extract_file

SECRET = "the secret line that must never be indexed"


@pytest.fixture
def outside(tmp_path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(f"name,value\n{SECRET},1\n", encoding="utf-8")
    return secret


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def read(root: Path, path: str) -> dict:
    data = (root / path).read_bytes()
    return extract_file(root, path, "rst" if path.endswith(".rst") else "markdown", hashlib.sha256(data).hexdigest(),
                        10**7)


def test_a_symbolic_link_that_leaves_the_corpus_is_not_read(tmp_path, outside):
    corpus = write(tmp_path / "corpus", {"page.md": "# Page\n\nInside text.\n", "sub/inner.md": "# Inner\n\nText.\n"})
    os.symlink(outside, corpus / "leak.txt")
    os.symlink(outside.parent, corpus / "leaked-folder")
    os.symlink(corpus / "sub" / "inner.md", corpus / "alias.md")  # a link that stays inside is a document
    skipped: dict[str, str] = {}
    paths = [e.path for e in scan_corpus(corpus, skipped)]
    assert paths == ["alias.md", "page.md", "sub/inner.md"]
    assert skipped["leak.txt"].startswith("symbolic link leads outside the corpus folder (")
    assert skipped["leaked-folder"].startswith("symbolic link leads outside the corpus folder (")


def test_sphinx_directives_never_read_a_file_outside_the_corpus(tmp_path, outside):
    corpus = write(tmp_path / "corpus", {
        "conf.py": "",
        "shared.rst": "Shared text from inside the corpus.\n",
        "sample.py": "print('inside')\n",
        "index.rst": f"""
            Page
            ====

            Before.

            .. csv-table:: Leak
               :file: {outside}

            .. include:: {outside}

            .. literalinclude:: ../outside/secret.txt

            .. raw:: html
               :file: {outside}

            .. csv-table:: Remote
               :url: http://127.0.0.1:9/data.csv

            .. include:: link/secret.txt

            .. include:: shared.rst

            .. literalinclude:: sample.py

            After.
        """,
    })
    os.symlink(outside.parent, corpus / "link")  # an include through a link that leaves the corpus
    row = read(corpus, "index.rst")
    assert row["status"] == "ok", row["error"]
    text = row["text"]
    assert SECRET not in text and "name,value" not in text
    assert "Before." in text and "After." in text
    assert "Shared text from inside the corpus." in text and "print('inside')" in text  # inside: read as before
    # each refusal is counted (an include from the root is the source folder's to Sphinx: no such file, nothing read)
    assert row["unknown_constructs"] >= 5


def test_include_markers_never_read_a_file_outside_the_corpus(tmp_path, outside):
    corpus = write(tmp_path / "corpus", {
        "mkdocs.yml": "site_name: x\n",
        "docs/page.md": f"""
            # Page

            --8<-- "{outside}"

            {{* ../../outside/secret.txt *}}

            --8<-- "../../outside/secret.txt"

            Kept text.
        """,
    })
    row = read(corpus, "docs/page.md")
    assert row["status"] == "ok" and SECRET not in row["text"] and "Kept text." in row["text"]
    assert row["unknown_constructs"] == 3


def test_a_path_from_the_source_folders_root_inside_the_corpus_is_read(tmp_path):
    corpus = write(tmp_path / "corpus", {"conf.py": "", "parts/shared.rst": "Shared text from the source root.\n",
                                         "sub/index.rst": "Page\n====\n\n.. include:: /parts/shared.rst\n"})
    row = read(corpus, "sub/index.rst")
    assert "Shared text from the source root." in row["text"] and row["unknown_constructs"] == 0
