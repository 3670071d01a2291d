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


# --- a tree's configuration never makes the project run code or read outside the corpus -------------------

def mkdocs_tree(root: Path, extensions: str, page: str) -> Path:
    """An MkDocs tree at ``root`` whose mkdocs.yml lists ``extensions`` (YAML) and whose one page is ``page``."""
    return write(root, {"mkdocs.yml": f"site_name: x\nmarkdown_extensions:\n{extensions}",
                        "docs/page.md": page})


def test_an_extension_named_as_module_and_attribute_is_never_imported_or_called(tmp_path):
    marker = tmp_path / "PWNED"
    corpus = mkdocs_tree(tmp_path / "corpus", f"""
  - os:system:
      command: "touch {marker}"
  - subprocess:getoutput:
      cmd: "touch {marker}"
  - admonition
  - this_module_is_not_installed_anywhere
""", "# Page\n\n!!! note\n    Kept text of a note.\n")
    row = read(corpus, "docs/page.md")
    assert not marker.exists(), "a module:attr extension of mkdocs.yml ran"
    assert row["status"] == "ok" and "Kept text of a note." in row["text"] and "!!!" not in row["text"]


def test_the_skipped_extensions_are_named_with_their_reason(tmp_path):
    from rag_assets.lib.ingest.doc_sources import mkdocs_extensions

    names, configs, skipped = mkdocs_extensions({"markdown_extensions": [
        {"os:system": {"command": "true"}}, "pymdownx.snippets:SnippetExtension", "markdown.extensions.toc:TocExtension",
        "tables", "markdown.extensions.smarty", "pymdownx.mark", "rag_assets.cli", "mytheme.extensions.callouts"]})
    assert "os:system" not in names and "rag_assets.cli" not in names and "mytheme.extensions.callouts" not in names
    assert {"markdown.extensions.smarty", "pymdownx.mark", "markdown.extensions.toc"} <= set(names)
    assert skipped["os:system"].startswith("names code (module:attribute)") and "run_tree_code" in skipped["os:system"]
    assert "not an extension of Python-Markdown or pymdown-extensions" in skipped["rag_assets.cli"]
    assert "not an extension of Python-Markdown or pymdown-extensions" in skipped["mytheme.extensions.callouts"]
    # the snippets extension, under its module:attribute alias too, is this project's include resolver's
    assert "pymdownx.snippets" not in names and "pymdownx.snippets:SnippetExtension" not in names
    assert "resolved inside the snapshot" in skipped["pymdownx.snippets:SnippetExtension"]


def test_run_tree_code_loads_what_the_tree_names(tmp_path, monkeypatch):
    import sys

    from rag_assets.lib.ingest.doc_sources import mkdocs_extensions

    (tmp_path / "tree_callouts.py").write_text(
        "from markdown.extensions import Extension\n\nclass Callouts(Extension):\n"
        "    def extendMarkdown(self, md):\n        pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = {"markdown_extensions": ["tree_callouts:Callouts", "tree_callouts"]}
    names, _, skipped = mkdocs_extensions(config)
    assert "tree_callouts" not in sys.modules and set(skipped) == {"tree_callouts:Callouts", "tree_callouts"}
    names, _, skipped = mkdocs_extensions(config, run_tree_code=True)
    assert "tree_callouts:Callouts" in names and "tree_callouts:Callouts" not in skipped


def test_the_snippets_alias_with_a_base_path_outside_never_reads_it(tmp_path, outside):
    corpus = mkdocs_tree(tmp_path / "corpus", f"""
  - pymdownx.snippets:SnippetExtension:
      base_path: ["{outside.parent}"]
      check_paths: true
""", "# Page\n\n--8<-- \"secret.txt\"\n\n--8<--\nsecret.txt\n--8<--\n\nKept text.\n")
    row = read(corpus, "docs/page.md")
    assert row["status"] == "ok" and SECRET not in row["text"] and "Kept text." in row["text"]
    assert row["unknown_constructs"] == 2


def test_the_block_form_of_a_snippet_reads_inside_and_refuses_outside(tmp_path, outside):
    corpus = mkdocs_tree(tmp_path / "corpus", f"""
  - pymdownx.snippets:
      base_path: ["{outside.parent}", "docs"]
""", f"""# Page

Before.

--8<--
shared.md
; commented-out.md
{outside}
../../outside/secret.txt
--8<--

After.
""")
    (corpus / "docs" / "shared.md").write_text("A shared paragraph from inside the tree.\n")
    row = read(corpus, "docs/page.md")
    assert row["status"] == "ok" and SECRET not in row["text"]
    assert "A shared paragraph from inside the tree." in row["text"]
    assert "Before." in row["text"] and "After." in row["text"] and "--8<--" not in row["text"]
    assert "shared.md" not in row["text"] and "commented-out" not in row["text"]
    assert row["unknown_constructs"] == 2  # the two outside, each counted


def test_a_myst_include_never_reads_outside_the_corpus(tmp_path, outside):
    corpus = write(tmp_path / "corpus", {
        "conf.py": "",
        "shared.md": "Shared MyST text from inside the tree.\n",
        "index.md": f"""
            # Page

            Before.

            ```{{include}} ../outside/secret.txt
            ```

            ```{{include}} {outside}
            ```

            ```{{include}} shared.md
            ```

            After.
        """,
    })
    row = read(corpus, "index.md")
    assert row["status"] == "ok", row["error"]
    assert SECRET not in row["text"] and "name,value" not in row["text"]
    assert "Before." in row["text"] and "After." in row["text"]
    assert "Shared MyST text from inside the tree." in row["text"]
    # the relative path that leaves the tree is refused and counted (an absolute one is the source folder's to
    # Sphinx: no such file there, nothing read)
    assert row["unknown_constructs"] == 1
