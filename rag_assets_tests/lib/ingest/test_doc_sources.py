"""Documentation sources read as their tools render them: Sphinx (reStructuredText and MyST), MkDocs,
MDX; one construct per test, and one end-to-end test per ecosystem against the real tool's build."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets.lib.ingest.doc_sources import syntax_lines
from rag_assets.lib.ingest.documents import extract_file
from rag_assets.lib.ingest.extraction import extract_document
from rag_assets.lib.ingest.fidelity import coverage
from rag_assets_tests.conftest import FIXTURES

TREES = FIXTURES / "doc_trees"


def extracted(root: Path, path: str) -> dict:
    data = (root / path).read_bytes()
    row = extract_file(root, path, "rst" if path.endswith(".rst") else "markdown", hashlib.sha256(data).hexdigest(),
                       10**7)
    assert row["status"] == "ok", row["error"]
    return row


@pytest.fixture(scope="module")
def sphinx_pages() -> dict[str, dict]:
    return {name: extracted(TREES / "sphinx", f"docs/{name}") for name in ("index.rst", "config.rst", "guide.md")}


def test_sphinx_roles_render_as_their_text(sphinx_pages):
    text = sphinx_pages["index.rst"]["text"]
    assert "Pkg reads its settings with load() from the file the user names." in text
    assert "See Configuration reference for every value and Guide in MyST for a walk through." in text
    assert ":func:" not in text and ":ref:" not in text and "`" not in text
    assert "It updates config and reports missing files" in sphinx_pages["config.rst"]["text"]


def test_sphinx_domain_directives_keep_signature_and_body(sphinx_pages):
    text = sphinx_pages["config.rst"]["text"]
    assert "SECRET_KEY\n\nA secret key that will be used for securely signing the session cookie." in text
    assert "load(path: str, *, silent: bool = False) → dict" in text
    assert "The central object of every application built with Pkg." in text


def test_sphinx_version_notes_admonitions_and_code(sphinx_pages):
    text = sphinx_pages["index.rst"]["text"]
    assert "Added in version 2.1: The load function accepts a path object." in text
    assert "Deprecated since version 3.0: Use App.load_config() instead of the module function." in text
    assert "Keep the secret key secret. Anyone holding it can sign session cookies." in text
    assert "Never run the debugger in production because it executes arbitrary code." in text
    assert "app.py\n\napp = Pkg(__name__)" in text  # a code-block with its caption
    assert 'print("hello from the example file")' in text  # a literalinclude, read inside the tree


def test_sphinx_toctree_and_index_give_no_text_and_anchors_are_sphinx_ids(sphinx_pages):
    row = sphinx_pages["index.rst"]
    assert not row["text"].startswith("Welcome to Pkg\n\nConfiguration reference")  # the toctree's entries
    assert "single: configuration" not in row["text"]
    assert [(s["heading"], s["anchor"]) for s in row["sections"]] == [("Welcome to Pkg", "welcome-to-pkg"),
                                                                     ("Installing", "installing")]
    assert [s["anchor"] for s in sphinx_pages["config.rst"]["sections"]] == ["configuration-reference"]


def test_a_directive_or_role_nobody_registered_keeps_its_content_and_is_counted(sphinx_pages):
    assert "The content of a directive nobody registered survives its rendering." in sphinx_pages["index.rst"]["text"]
    assert sphinx_pages["index.rst"]["unknown_constructs"] == 1
    assert "reports missing files through the logging system." in sphinx_pages["config.rst"]["text"]
    assert sphinx_pages["config.rst"]["unknown_constructs"] == 1


def test_myst_in_a_sphinx_tree_goes_through_myst_parser(sphinx_pages):
    text = sphinx_pages["guide.md"]["text"]
    assert "The guide explains how pkg.config.load() finds the settings file." in text
    assert "A MyST note keeps its body in the canonical text." in text
    assert "A colon fence tip is rendered as an admonition too." in text
    assert "{py:func}" not in text and ":::" not in text


def test_the_trees_own_conf_py_is_never_executed(tmp_path):
    tree = tmp_path / "corpus" / "docs"
    tree.mkdir(parents=True)
    marker = tmp_path / "conf-ran"
    (tree / "conf.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (tree / "index.rst").write_text("Title\n=====\n\nA sentence about :class:`Thing` objects.\n")
    row = extracted(tmp_path / "corpus", "docs/index.rst")
    assert "A sentence about Thing objects." in row["text"] and not marker.exists()


def test_mkdocs_pages_render_with_their_extensions():
    row = extracted(TREES / "mkdocs", "docs/tutorial/first.md")
    text = row["text"]
    assert row["title"] == "First steps"  # the front matter's
    assert [(s["heading"], s["anchor"]) for s in row["sections"]] == [("First Steps", "first-steps"),
                                                                     ("Options", "options-section")]
    assert "{ #" not in text and "///" not in text and "!!!" not in text and "===" not in text
    assert "You can run the program with the python command." in text  # a /// block admonition
    assert "Careful\n\nDo not run this program as the root user." in text  # a !!! admonition with its title
    assert "Open a terminal and run the program there." in text  # a tab
    assert "A snippet paragraph that is shared by several pages." in text  # --8<-- resolved in the snapshot
    assert "Term\n\nA definition that explains the term in one sentence." in text
    assert row["syntax_lines"] == 0


def test_an_attribute_list_is_a_headings_anchor_even_when_mkdocs_yml_configures_no_extension(tmp_path):
    """attr_list is in the base set (Material and most trees rely on it): a tree whose mkdocs.yml lists
    no markdown_extensions still reads ``{ #setup }`` as the heading's anchor, never as text."""
    (tmp_path / "mkdocs.yml").write_text("site_name: Bare\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Install { #setup }\n\nRun the installer once.\n")
    row = extracted(tmp_path, "docs/index.md")
    assert [(s["heading"], s["anchor"]) for s in row["sections"]] == [("Install", "setup")]
    assert row["text"] == "Install\n\nRun the installer once." and row["syntax_lines"] == 0


def test_an_include_marker_is_resolved_in_the_snapshot_or_dropped_and_counted():
    row = extracted(TREES / "mkdocs", "docs/tutorial/includes.md")
    assert "import typer\n\napp = typer.Typer()" in row["text"]
    assert "{*" not in row["text"] and "tutorial999" not in row["text"]
    assert row["unknown_constructs"] == 1  # the marker whose file the snapshot does not hold


def test_an_include_never_reads_outside_the_corpus_folder(tmp_path):
    (tmp_path / "secret.txt").write_text("a secret outside the corpus\n")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "page.md").write_text("# Page\n\nText of the page.\n\n--8<-- \"../secret.txt\"\n")
    row = extracted(corpus, "page.md")
    assert "secret" not in row["text"] and row["unknown_constructs"] == 1


def test_mdx_keeps_what_a_reader_sees():
    row = extracted(TREES / "mdx", "install.mdx")
    assert row["title"] == "Installing the tool"
    assert row["text"] == ("Installing\n\nRemember\n\nNode 18 or newer is required to build the site.\n\n"
                           "Run npm install in the project folder.")
    assert row["syntax_lines"] == 0


def test_plain_markdown_front_matter_is_metadata_not_text(tmp_path):
    (tmp_path / "a.md").write_text("---\ntitle: A page\ntags: [x]\n---\n\n# Heading\n\nBody text here.\n")
    row = extracted(tmp_path, "a.md")
    assert row["title"] == "A page" and row["text"] == "Heading\n\nBody text here." and "tags" not in row["text"]


def test_html_admonitions_in_aside_are_kept_and_footnotes_still_dropped():
    html = (b'<html><body><main><p>Body.</p><aside class="admonition warning"><p class="admonition-title">Warning</p>'
            b'<p>A security warning.</p></aside><aside class="footnote brackets"><p>A footnote.</p></aside>'
            b'</main></body></html>')
    assert extract_document(html, "html", "x").text == "Body.\n\nWarning\n\nA security warning."


@pytest.mark.parametrize(("line", "counted"), [
    ("Uses :attr:`~pkg.App.config` here.", 1), ("See {func}`pkg.load`.", 1), (".. note::", 1), ("```python", 1),
    ("/// tip", 1), ("!!! warning", 1), ("# Install { #install }", 1), ("{* ../docs_src/a.py *}", 1),
    ('--8<-- "a.md"', 1), ("import Tabs from '@theme/Tabs';", 1), ("A plain sentence: with a colon.", 0),
    ("Use the `config` attribute.", 0), ("Costs {1, 2} and {x}.", 0)])
def test_syntax_lines_counts_what_a_reader_would_not_see(line, counted):
    assert syntax_lines(f"Intro line.\n\n{line}\n\nOutro line.") == counted  # a paragraph of its own


def test_syntax_in_code_is_an_example_not_syntax_left():
    assert syntax_lines("Intro line.\n\nimport os\nimport Tabs from '@theme/Tabs';\nprint(os)\n\nOutro.") == 0
    assert syntax_lines("A MyST example:\n\n```{note}\nA note.\n```\n\n/// details | Heads up\nBody.\n///") == 0
    assert syntax_lines("Left over: :func:`load` is unrendered.\n\n.. note::") == 2


def _site_text(html_files: list[Path]) -> str:
    from rag_assets.lib.ingest.extraction import extract_html

    return "\n\n".join(extract_html(path.read_bytes(), path.stem).text for path in html_files)


def test_the_sphinx_tree_reads_as_sphinx_build_renders_it(tmp_path, sphinx_pages):
    """The oracle: sphinx-build -b text with the tree's own conf.py."""
    out = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "text", "-q", str(TREES / "sphinx" / "docs"), str(out)],
                   check=True, capture_output=True)
    # where we differ from Sphinx on purpose: what nobody registered is kept as text, where Sphinx drops a
    # directive and prints a role's source
    kept = {"index.rst": (["the content of a directive nobody registered survives its rendering"], []),
            "config.rst": (["it updates config and reports missing files through the logging system"],
                           ["it updates config and reports missing files through unknownrole the logging system"]),
            "guide.md": ([], [])}
    for name, row in sphinx_pages.items():
        site = (out / Path(name).with_suffix(".txt")).read_text(encoding="utf-8")
        counts, missed, extra = coverage(row["text"], site)
        assert counts.site_sentences >= 3 and missed == kept[name][1], (name, missed)
        assert extra == kept[name][0], (name, extra)


def test_the_mkdocs_tree_reads_as_mkdocs_build_renders_it(tmp_path):
    """The oracle: mkdocs build with the tree's mkdocs.yml (Material theme); the page's article is compared."""
    tree = tmp_path / "tree"
    shutil.copytree(TREES / "mkdocs", tree)
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(tmp_path / "site")], cwd=tree,
                   check=True, capture_output=True, env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    from selectolax.lexbor import LexborHTMLParser

    for name in ("index.md", "tutorial/first.md"):
        ours = extracted(tree, f"docs/{name}")["text"]
        page = tmp_path / "site" / (name.replace(".md", "/index.html") if name != "index.md" else "index.html")
        article = LexborHTMLParser(page.read_text(encoding="utf-8")).css_first("article")
        site = (tmp_path / "article.html")
        site.write_text(f"<html><body><main>{article.html}</main></body></html>", encoding="utf-8")
        counts, missed, extra = coverage(ours, _site_text([site]))
        assert counts.site_sentences >= 1 and missed == [], (name, missed)
        assert extra == [], (name, extra)
