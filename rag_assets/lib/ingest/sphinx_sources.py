"""Sphinx source trees read as Sphinx renders them.

A folder with a ``conf.py`` (or, without one, the corpus folder's reStructuredText files) is built
once per process with Sphinx's own HTML builder, into a temporary folder, and each page is then read
by the HTML rules of ``extraction``: roles render as their text (``:func:`~pkg.mod.fn``` is ``fn()``,
``:doc:``/``:ref:`` the target's title), domain directives (``py:function``, ``py:data``, ``confval``,
...) keep their signature and body, ``versionadded``/``versionchanged``/``deprecated`` Sphinx's sentence
("Added in version 2.1: ..."), admonitions their body, ``code-block`` and ``literalinclude`` their code
(resolved inside the tree), section anchors the ids Sphinx gives; a ``toctree`` gives no text.

The project's own ``conf.py`` is not executed by default (it can import anything): the build uses Sphinx's
defaults with MyST (``.md`` files of the tree, through myst-parser), the object types the tree's local
extensions declare, read from their text (``sphinx_conf``: a ``.. setting:: NAME`` of Scrapy's is a target,
not a paragraph), and this module's fallback, under which a directive that nobody registered keeps its body
(never its argument line) and a role its text, counted per page instead of being dropped. Directives whose
text autodoc generates from the documented code (``automodule``, ``autoclass``, ... every ``auto*``) give no
generated text, counted apart (``from_code``), since importing the package runs its code; what the author wrote
under such a directive (its content) stays, as on the site. With
``run_tree_code`` (the setting ``evaluation.run_tree_code``, off by default) the tree is built with its own
``conf.py`` executed, its extensions loaded and autodoc importing the package, as its site is; a tree whose
configuration cannot run here is built without it, and ``warnings`` says why.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import shutil
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from rag_assets.lib.ingest.sphinx_conf import read_conf, types_extension

SPHINX_CHROME = "div.toctree-wrapper, div.sphinxsidebar, div.related, a.headerlink"
MYST_EXTENSIONS = ["colon_fence", "deflist", "fieldlist", "substitution", "attrs_inline", "attrs_block", "tasklist"]
_SOURCE_SUFFIXES = {".rst": "restructuredtext", ".md": "markdown", ".txt": "restructuredtext"}


@dataclass
class SphinxBuild:
    """One tree built: where each source's page is, and the constructs nobody registered, per page."""

    source_root: Path
    html_root: Path
    unknown: dict[str, int] = field(default_factory=dict)  # docname -> directives and roles kept by the fallback
    from_code: dict[str, int] = field(default_factory=dict)  # docname -> autodoc directives left without text
    refused: dict[str, list[str]] = field(default_factory=dict)  # docname -> files a directive named, not read
    warnings: str = ""
    configuration: str = "Sphinx's defaults"  # how the tree's conf.py was used

    def page(self, source: Path) -> tuple[Path, str]:
        """(the HTML page of ``source``, its docname)."""
        docname = source.relative_to(self.source_root).with_suffix("").as_posix()
        return self.html_root / f"{docname}.html", docname


_builds: dict[tuple[str, str], SphinxBuild] = {}


def _tree_digest(root: Path, suffixes: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in suffixes):
        status = path.stat()
        digest.update(f"{path.relative_to(root)}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def sphinx_build(source_root: Path, with_markdown: bool, conf: Path | None = None,
                 run_tree_code: bool = False, corpus_root: Path | None = None) -> SphinxBuild:
    """The tree at ``source_root`` built with Sphinx's HTML builder (once per process and tree state), with
    ``conf`` (its ``conf.py``, inside the tree or above the corpus folder) read or, with ``run_tree_code``, run.
    No directive reads a file outside ``corpus_root`` (default: the tree), nor anything from the network."""
    suffixes = (".rst", ".md") if with_markdown else (".rst",)
    conf_state = f"{conf}:{conf.stat().st_mtime_ns}" if conf is not None and conf.is_file() else ""
    inside = Path(corpus_root or source_root).resolve()
    key = (str(source_root.resolve()), _tree_digest(source_root, suffixes) + conf_state + f":{run_tree_code}:{inside}")
    if key not in _builds:
        _builds[key] = _build(source_root.resolve(), suffixes, conf if conf_state else None, run_tree_code, inside)
    return _builds[key]


def _build(source_root: Path, suffixes: tuple[str, ...], conf: Path | None, run_tree_code: bool,
           inside: Path) -> SphinxBuild:
    out = Path(tempfile.mkdtemp(prefix="rag-assets-sphinx-"))
    atexit.register(shutil.rmtree, out, True)
    overrides = {
        "source_suffix": {suffix: _SOURCE_SUFFIXES[suffix] for suffix in suffixes},
        "html_theme": "basic", "exclude_patterns": ["_build", "**/_build", ".*", *_other_trees(source_root)],
        "myst_enable_extensions": MYST_EXTENSIONS, "suppress_warnings": ["toc.not_included", "myst.header"],
        "html_permalinks": False, "root_doc": _root_doc(source_root, suffixes),
        # only the pages are read: no copies of the sources, no indices
        "html_copy_source": False, "html_use_index": False, "html_domain_indices": False,
        "html_show_sourcelink": False,
    }
    refused = ""
    if run_tree_code and conf is not None:
        theirs = read_conf(conf).extensions
        extensions = [*theirs, *(["myst_parser"] if ".md" in suffixes and "myst_parser" not in theirs else [])]
        build = SphinxBuild(source_root, out / "run" / "html", configuration=f"{conf} run (its extensions loaded)")
        try:
            return _run(build, out / "run", overrides | {"extensions": extensions}, conf.parent, inside)
        except Exception as error:  # noqa: BLE001 - a configuration that cannot run here: read without it
            refused = (f"the tree's conf.py ({conf}) could not run here ({type(error).__name__}: {error}); "
                       "built without its code\n")
    read = read_conf(conf) if conf is not None else None
    extensions = ["myst_parser"] if ".md" in suffixes else []
    build = SphinxBuild(source_root, out / "html", configuration=(
        f"{conf} read, not run ({len(read.object_types)} object types of its extensions)" if read else
        "Sphinx's defaults"))
    if read and read.object_types:
        module = f"rag_assets_tree_types_{hashlib.sha256(str(conf).encode()).hexdigest()[:12]}"
        (out / "extensions").mkdir()
        (out / "extensions" / f"{module}.py").write_text(types_extension(read.object_types), encoding="utf-8")
        extensions.append(module)
    sys.path.insert(0, str(out / "extensions"))
    try:
        built = _run(build, out, overrides | {"extensions": extensions}, None, inside)
    finally:
        sys.path.remove(str(out / "extensions"))
    built.warnings = refused + built.warnings
    return built


def _run(build: SphinxBuild, out: Path, overrides: dict, confdir: Path | None, inside: Path) -> SphinxBuild:
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    warnings = io.StringIO()
    # docutils' registries are global: what one build's extensions register (autodoc's directives) is taken
    # out again after it, as sphinx-build does, so that the next build of the process never sees it
    with docutils_namespace(), _kept_unknown(build.unknown, build.from_code, inside, build.refused):
        app = Sphinx(str(build.source_root), str(confdir) if confdir else None, str(build.html_root),
                     str(out / "doctrees"), "html", confoverrides=overrides, status=io.StringIO(),
                     warning=warnings, freshenv=True, keep_going=True, parallel=0)
        app.build(force_all=True)
    build.warnings = warnings.getvalue()
    return build


def _other_trees(source_root: Path) -> list[str]:
    """Sphinx trees (a conf.py) below ``source_root``: each is built as its own project, not as part of this."""
    return [f"{conf.parent.relative_to(source_root).as_posix()}/**" for conf in source_root.rglob("conf.py")
            if conf.parent != source_root]


def _root_doc(source_root: Path, suffixes: tuple[str, ...]) -> str:
    """The tree's root document: index, or contents, or else its first source file (Sphinx needs one)."""
    sources = sorted(p for p in source_root.rglob("*") if p.suffix in suffixes and p.is_file()
                     and not any(part.startswith((".", "_build")) for part in p.relative_to(source_root).parts))
    names = [p.relative_to(source_root).with_suffix("").as_posix() for p in sources]
    return next((name for name in ("index", "contents") if name in names), names[0] if names else "index")


# the directives that put a file's content into a page, and the options that name the file (or a URL)
FILE_DIRECTIVES = {"include": (), "literalinclude": ("diff",), "csv-table": ("file", "url"), "raw": ("file", "url")}


@contextmanager
def _kept_unknown(counts: dict[str, int], from_code: dict[str, int], inside: Path | None = None,
                  refused: dict[str, list[str]] | None = None) -> Iterator[None]:
    """While Sphinx reads: a directive or role nobody registered keeps its content (a directive its body, never
    its argument line), counted by page; an ``auto*`` directive nobody registered (autodoc's, generated from
    code) gives nothing, counted apart by page."""
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives, roles

    def docname_of(document) -> str:
        env = getattr(document.settings, "env", None)
        return getattr(env, "docname", "") or ""

    class AnyOption(dict):
        def __contains__(self, name) -> bool:
            return True

        def __getitem__(self, name):
            return directives.unchanged

    class KeptDirective(Directive):
        has_content = True
        optional_arguments = 100
        final_argument_whitespace = True
        option_spec = AnyOption()

        def run(self):
            document = self.state.document
            counts[docname_of(document)] = counts.get(docname_of(document), 0) + 1
            container = nodes.container(classes=["unregistered-directive", self.name])
            self.state.nested_parse(self.content, self.content_offset, container)
            return [container]

    class FromCode(KeptDirective):
        """autodoc's directives, when the documented code is not imported: what they generate (the docstrings,
        the members) is not there, counted; what the author wrote under them (their content, as autodoc
        puts it after the docstring) stays."""

        def run(self):
            document = self.state.document
            from_code[docname_of(document)] = from_code.get(docname_of(document), 0) + 1
            if not self.content:
                return []
            container = nodes.container(classes=["generated-from-code", self.name])
            self.state.nested_parse(self.content, self.content_offset, container)
            return [container]

    def kept_role(name, rawtext, text, lineno, inliner, options=None, content=None):
        counts[docname_of(inliner.document)] = counts.get(docname_of(inliner.document), 0) + 1
        shown = text.split("<")[0].strip() if text.endswith(">") and "<" in text else text
        return [nodes.inline(rawtext, shown.lstrip("~!"))], []

    lookup_directive, lookup_role = directives.directive, roles.role
    guarded: dict[type, type] = {}

    def within(directive_class: type, name: str) -> type:
        """``directive_class`` refusing a file outside the corpus folder (``inside``) or a URL: nothing is read
        then, the page gets nothing, and the file is named in ``refused``."""
        if directive_class not in guarded:
            class Within(directive_class):
                def run(self):
                    outside = self.outside()
                    if outside:
                        document = self.state.document
                        counts[docname_of(document)] = counts.get(docname_of(document), 0) + 1
                        if refused is not None:
                            refused.setdefault(docname_of(document), []).append(outside)
                        return []
                    return super().run()

                def outside(self) -> str | None:
                    names = [self.arguments[0]] if self.arguments and name in ("include", "literalinclude") else []
                    names += [self.options[o] for o in FILE_DIRECTIVES.get(name, ()) if o != "url" and o in self.options]
                    if "url" in self.options:
                        return f"{self.options['url']} (a URL)"
                    document = self.state.document
                    source = Path(document.current_source or document.get("source") or ".")
                    env = getattr(document.settings, "env", None)
                    for named in names:
                        named = str(named).strip()
                        if named.startswith("<") and named.endswith(">"):
                            continue  # docutils' own standard definition files
                        # a path from the root is the source folder's to Sphinx's include and literalinclude;
                        # csv-table and raw read it from the file system when it exists there, else from the
                        # source folder: every way it may be read must lie inside
                        if not named.startswith("/"):
                            candidates = [(source.parent / named).resolve()]
                        else:
                            candidates = [(Path(env.srcdir) / named.lstrip("/")).resolve()] if env is not None else []
                            if name not in ("include", "literalinclude") or env is None:
                                candidates.append(Path(named).resolve())
                        if inside is not None and any(t != inside and inside not in t.parents for t in candidates):
                            return named
                    return None

            guarded[directive_class] = Within
        return guarded[directive_class]

    def directive(name, language, document):
        found, messages = lookup_directive(name, language, document)
        if found is not None:
            return (within(found, name) if name in FILE_DIRECTIVES else found), messages
        return (FromCode if name.split(":")[-1].startswith("auto") else KeptDirective), []

    def role(name, language, lineno, reporter):
        found, messages = lookup_role(name, language, lineno, reporter)
        return (found, messages) if found is not None else (kept_role, [])

    from myst_parser.mocking import MockIncludeDirective

    myst_include = MockIncludeDirective.run

    def myst_include_within(self):
        """MyST runs an ``{include}`` itself (not through the directive class): the same refusal."""
        named = "".join(s.strip() for s in (self.arguments[0] if self.arguments else "").splitlines())
        if not (named.startswith("<") and named.endswith(">")) and inside is not None:
            env = getattr(self.document.settings, "env", None)
            path = Path(env.relfn2path(named)[1]) if env is not None else \
                Path(self.document["source"]).absolute().parent / named
            path = path.resolve()
            if path != inside and inside not in path.parents:
                counts[docname_of(self.document)] = counts.get(docname_of(self.document), 0) + 1
                if refused is not None:
                    refused.setdefault(docname_of(self.document), []).append(named)
                return []
        return myst_include(self)

    directives.directive, roles.role = directive, role
    MockIncludeDirective.run = myst_include_within
    try:
        yield
    finally:
        directives.directive, roles.role = lookup_directive, lookup_role
        MockIncludeDirective.run = myst_include
