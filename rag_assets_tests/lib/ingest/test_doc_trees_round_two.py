"""Documentation trees, round two: a docs folder read with the configuration beside it, autodoc and a tree's own
object types in Sphinx, MkDocs autorefs, blocks and code annotations, Docusaurus pages as MDX, and a tree's
configuration listed as such, never a failed document. Each construct on a small tree written here."""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import pytest

from rag_assets.cli.project import tree_note
from rag_assets.lib.ingest.corpus import CONFIGURATION, scan_corpus
from rag_assets.lib.ingest.doc_sources import DOCUSAURUS, MKDOCS, SPHINX, SourceFile, tree_of, trees_used
from rag_assets.lib.ingest.documents import extract_entry, extract_file, extraction_summary
from rag_assets.lib.ingest.folding import fold


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def read(root: Path, path: str, run_tree_code: bool = False) -> dict:
    data = (root / path).read_bytes()
    row = extract_file(root, path, "rst" if path.endswith(".rst") else "markdown", hashlib.sha256(data).hexdigest(),
                       10**7, run_tree_code)
    assert row["status"] == "ok", row["error"]
    return row


MKDOCS_TREE = {
    "mkdocs.yml": """
        site_name: Demo
        plugins:
          - search
          - autorefs
        markdown_extensions:
          - attr_list
          - pymdownx.blocks.admonition:
              types: [new]
    """,
    "docs/index.md": """
        # Install { #setup }

        Read [the `Client` class][demo.Client] and [demo.connect][] before you start.

        /// admonition | Careful
            type: warning
        Never share the token with anyone else.
        ///

        /// new | New in 2.0
        Connections are pooled by default now.
        ///

        /// version-added | 1.4
            style: compact
        Retries follow the server's advice.
        ///

        ```python
        client = Client()  # (1)!
        ```

        1. The client reads its token from the environment.

        ::: demo.Client
            options:
              show_source: false

        The end of the page.
    """,
}


def test_a_docs_folder_is_read_with_the_mkdocs_yml_beside_it(tmp_path):
    repository = write(tmp_path / "repo", MKDOCS_TREE)
    (repository / ".git").mkdir()
    corpus = repository / "docs"
    tree = tree_of(SourceFile(corpus, "index.md"))
    assert tree == (MKDOCS, repository, repository / "mkdocs.yml")
    text = read(corpus, "index.md")["text"]
    assert "{ #setup }" not in text and text.startswith("Install")  # the anchor is an anchor, not text
    # autorefs: the reference is its title, as the site's link shows it
    assert "Read the Client class and demo.connect before you start." in text and "][" not in text
    assert "Never share the token with anyone else." in text and "Connections are pooled by default now." in text
    assert "Retries follow the server's advice." in text and "///" not in text  # a block no extension declares
    assert "style: compact" not in text  # its options are no text
    assert "client = Client()" in text and "(1)" not in text  # the annotation marker goes, its text stays below
    assert "The client reads its token from the environment." in text
    # mkdocstrings' block: its text is generated from the code, so none here, counted
    assert "demo.Client" not in text and "show_source" not in text and text.endswith("The end of the page.")
    assert read(corpus, "index.md")["from_code"] == 1
    assert trees_used(corpus, ["index.md"]) == [{"tool": MKDOCS, "configuration": "../mkdocs.yml", "documents": 1}]
    assert "mkdocs configuration" in tree_note(corpus) and str(repository / "mkdocs.yml") in tree_note(corpus)
    # a docs_dir that is not the corpus folder: that mkdocs.yml is another tree's
    (repository / "mkdocs.yml").write_text("site_name: x\ndocs_dir: manual\n")
    assert tree_of(SourceFile(corpus, "index.md")) is None and tree_note(corpus) == ""


def test_the_search_above_stops_at_the_repository_top(tmp_path):
    outer = write(tmp_path, {"mkdocs.yml": "site_name: outer\ndocs_dir: repo/docs\n", "repo/docs/a.md": "# A\n\nText.\n"})
    (outer / "repo" / ".git").mkdir()
    assert tree_of(SourceFile(outer / "repo" / "docs", "a.md")) is None


SPHINX_TREE = {
    "conf.py": """
        import os
        import sys
        sys.path.insert(0, os.path.abspath("."))
        sys.path.append(os.path.abspath("_ext"))
        extensions = ["sphinx.ext.autodoc", "demotypes"]
    """,
    "_ext/demotypes.py": """
        def setup(app):
            app.add_crossref_type(directivename="setting", rolename="setting", indextemplate="pair: %s; setting")
            app.add_object_type("signal", "signal")
            return {"parallel_read_safe": True}
    """,
    "demopkg/__init__.py": '''
        """Demo package."""


        def connect(url):
            """Open a connection to the broker that serves the given address."""


        class Broker:
            """A broker."""
    ''',
    "index.rst": """
        Settings
        ========

        .. setting:: RETRY_TIMES

        RETRY_TIMES
        -----------

        How often a failed request is tried again; see :setting:`RETRY_TIMES`.

        .. frobnicate:: an argument line nobody registered

           The body of a directive nobody registered stays.

        API
        ---

        .. automodule:: demopkg
           :members: connect
           :undoc-members:

        .. autoclass:: demopkg.Broker

           The author's own words under an autoclass stay, as on the site.
    """,
}


@pytest.fixture
def sphinx_tree(tmp_path) -> Path:
    return write(tmp_path / "tree", SPHINX_TREE)


def test_autodoc_gives_no_text_and_is_counted_while_the_trees_code_may_not_run(sphinx_tree):
    row = read(sphinx_tree, "index.rst")
    text = row["text"]
    assert ":members:" not in text and "demopkg" not in text and "connect" not in text
    # (Sphinx's smart quotes make the apostrophe typographic: it matches as typed, through the fold)
    assert row["from_code"] == 2 and fold("The author's own words under an autoclass stay.") in fold(
        text.replace(", as on the site", ""))
    # the tree's own object type: the target is no paragraph repeating the heading
    assert text.count("RETRY_TIMES") == 2, text  # the heading and the role's text, not the target's argument
    assert "How often a failed request is tried again; see RETRY_TIMES." in text
    # a directive nobody registered: its body, never its argument line
    assert "The body of a directive nobody registered stays." in text
    assert "an argument line nobody registered" not in text and row["unknown_constructs"] >= 1


def test_with_the_trees_code_allowed_autodoc_renders_the_docstrings(sphinx_tree):
    row = read(sphinx_tree, "index.rst", run_tree_code=True)
    assert "Open a connection to the broker that serves the given address." in row["text"]
    assert row["from_code"] == 0 and "The author’s own words under an autoclass stay, as on the site." in row["text"]


def test_a_sphinx_configuration_above_the_corpus_folder_is_read(tmp_path):
    tree = write(tmp_path / "tree", {**SPHINX_TREE, "topics/retries.rst": """
        Retries
        =======

        .. setting:: RETRY_ENABLED

        RETRY_ENABLED
        -------------

        Whether failed requests are tried again at all.
    """})
    corpus = tree / "topics"
    found = tree_of(SourceFile(corpus, "retries.rst"))
    assert found == (SPHINX, corpus.resolve(), tree / "conf.py")
    text = read(corpus, "retries.rst")["text"]
    assert text.count("RETRY_ENABLED") == 1 and "Whether failed requests are tried again at all." in text


DOCUSAURUS_TREE = {
    "docusaurus.config.js": "module.exports = {title: 'Demo'};\n",
    "sidebars.js": "module.exports = {docs: ['intro']};\n",
    "docs/_category_.json": '{"label": "Guides"}\n',
    "docs/intro.md": """
        ---
        title: Getting started
        ---
        import Tabs from '@theme/Tabs';
        import {
          TabItem,
        } from '@theme/TabItem';

        Install the package before anything else.

        :::tip[Before you start]
        Keep your token in an environment variable.
        :::

        ```js title="src/client.js"
        import {Client} from 'demo';
        // highlight-next-line
        const client = new Client();
        export default client;
        ```

        {/* a comment for the editors */}
        <Tabs><TabItem value="npm">Use npm to install it.</TabItem></Tabs>
    """,
}


def test_a_docusaurus_tree_reads_its_md_pages_as_mdx(tmp_path):
    tree = write(tmp_path / "site", DOCUSAURUS_TREE)
    corpus = tree / "docs"
    assert tree_of(SourceFile(corpus, "intro.md")) == (DOCUSAURUS, tree, tree / "docusaurus.config.js")
    row = read(corpus, "intro.md")
    text = row["text"]
    assert row["title"] == "Getting started"
    assert "import Tabs" not in text and "TabItem," not in text and "from '@theme" not in text
    assert "Install the package before anything else." in text
    assert "Before you start" in text and "Keep your token in an environment variable." in text and ":::" not in text
    # code keeps its import and export lines; its title is its caption; highlight comments go
    assert "src/client.js\n\nimport {Client} from 'demo';\nconst client = new Client();\nexport default client;" in text
    assert "highlight" not in text and "a comment for the editors" not in text
    assert "Use npm to install it." in text and row["syntax_lines"] == 0


def test_a_trees_configuration_is_listed_as_such_never_a_failed_document(tmp_path, sphinx_tree):
    site = write(tmp_path / "site", DOCUSAURUS_TREE)
    mkdocs = write(tmp_path / "mk", MKDOCS_TREE)
    for root, configuration in ((sphinx_tree, {"conf.py", "_ext/demotypes.py"}),
                                (site, {"docusaurus.config.js", "sidebars.js", "docs/_category_.json"}),
                                (mkdocs, {"mkdocs.yml"})):
        entries = scan_corpus(root)
        assert {e.path for e in entries if e.format == CONFIGURATION} == configuration, root
        rows = [row for e in entries for row in extract_entry(root, e.path, e.format, e.sha256, 10**7)]
        assert not [row for row in rows if row["doc_id"] in configuration]
    # the package's own code is not configuration: it is no document either way (an unsupported format)
    assert {e.format for e in scan_corpus(sphinx_tree) if e.path == "demopkg/__init__.py"} == {"unsupported"}
    summary = extraction_summary([read(sphinx_tree, "index.rst")])
    assert summary["from_code"] == 2 and summary["failed"] == 0


def test_a_docusaurus_site_beside_its_docs_folder_reads_them_as_mdx(tmp_path):
    """Redux Toolkit's layout: website/docusaurus.config.ts reads ../docs; the corpus is the repository or docs/."""
    repository = write(tmp_path / "repo", {
        "website/docusaurus.config.ts": "export default {presets: [['classic', {docs: {path: '../docs'}}]]};\n",
        "docs/intro.md": "import X from '@site/src/x';\n\n# Intro\n\n:::note\nBody of the note.\n:::\n",
    })
    (repository / ".git").mkdir()
    config = repository / "website" / "docusaurus.config.ts"
    for corpus, path in ((repository, "docs/intro.md"), (repository / "docs", "intro.md")):
        assert tree_of(SourceFile(corpus, path)) == (DOCUSAURUS, repository / "website", config)
        text = read(corpus, path)["text"]
        assert text == "Intro\n\nBody of the note.", text


def test_a_page_all_generated_from_code_is_recorded_as_such_not_failed(tmp_path):
    tree = write(tmp_path / "mk", {**MKDOCS_TREE, "docs/api.md": """
        ::: demo.Client
            options:
              show_source: false
    """})
    data = (tree / "docs" / "api.md").read_bytes()
    row = extract_file(tree, "docs/api.md", "markdown", hashlib.sha256(data).hexdigest(), 10**7)
    assert row["status"] == "generated" and "generated from the documented code" in row["error"]
    summary = extraction_summary([row, read(tree, "docs/index.md")])
    assert summary["failed"] == 0 and summary["generated"] == ["docs/api.md"] and summary["ok"] == 1


def test_the_run_says_which_configuration_the_pages_were_read_with(tmp_path):
    from rag_assets.cli.runs import configuration_lines
    from rag_assets.lib.ingest.documents import tree_configuration

    repository = write(tmp_path / "repo", {**MKDOCS_TREE, "docs/api.md": "::: demo.Client\n"})
    (repository / ".git").mkdir()
    corpus = repository / "docs"
    entries = [{"corpus_dir": str(corpus), "path": e.path, "format": e.format} for e in scan_corpus(corpus)]
    trees, configuration = tree_configuration(entries, corpus)
    assert trees == [{"tool": MKDOCS, "configuration": "../mkdocs.yml", "documents": 2}] and configuration == {}
    rows = [read(corpus, "index.md")]
    data = (corpus / "api.md").read_bytes()
    rows.append(extract_file(corpus, "api.md", "markdown", hashlib.sha256(data).hexdigest(), 10**7))
    summary = extraction_summary(rows)
    lines = configuration_lines({"trees": trees, "configuration_files": {"mkdocs.yml": "MkDocs configuration"},
                                 "documents_generated": summary["generated"], "generated_from_code": summary["from_code"]})
    assert lines[0] == "read with the MkDocs configuration ../mkdocs.yml: 2 documents"
    assert lines[1] == "configuration, not documents: 1 file(s): mkdocs.yml (MkDocs configuration)"
    assert lines[2].startswith("1 page(s) all generated from the documented code, nothing to index: api.md")
    assert lines[3].startswith("1 autodoc or mkdocstrings block(s) left without their generated text")
