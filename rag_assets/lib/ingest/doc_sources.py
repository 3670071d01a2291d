"""Documentation sources read as their authors' tools render them.

A reStructuredText or Markdown file is read by the tool of the tree it belongs to, found by walking up
from the file to the corpus folder:

- a folder with ``conf.py``: a Sphinx tree (``sphinx_sources``: Sphinx's own HTML builder, MyST for its
  ``.md`` files). A ``.rst`` file outside any tree is read by Sphinx too (the corpus folder's
  reStructuredText as one project), so Sphinx roles and directives render wherever they are;
- a folder with ``mkdocs.yml``: an MkDocs tree, rendered by Python-Markdown with the extensions its
  ``mkdocs.yml`` configures, on top of the ones MkDocs Material sites rely on (admonitions in the ``!!!``
  and ``///`` syntax, tabs, details, attribute lists: ``{ #id }`` is a heading's anchor, never text,
  tables, footnotes, definition lists, abbreviations);
- other Markdown and MDX: CommonMark, after YAML front matter (its ``title`` is the title) and, for MDX,
  ``import``/``export`` lines, ``{/* comments */}`` and ``:::note`` fences are taken out (a component's
  children keep their text: its tags are read as HTML).

An include marker that names a file (``{* path ... *}``, ``--8<-- "path"``) is replaced by that file when
the snapshot holds it (inside the corpus folder only), otherwise dropped and counted. ``syntax_lines``
counts the lines of a canonical text that still carry source syntax: the fidelity figure every
extraction records.
"""

from __future__ import annotations

import functools
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

SPHINX, MKDOCS, DOCUSAURUS = "sphinx", "mkdocs", "docusaurus"
DOCUSAURUS_CONFIGS = tuple(f"docusaurus.config.{suffix}" for suffix in ("js", "ts", "mjs", "cjs"))
ABOVE = 3  # folders above the corpus folder looked in for the configuration of the tree it is part of


@dataclass(frozen=True)
class SourceFile:
    """Where a document lives: the corpus folder and its path under it (for the tree it belongs to), and
    whether the tree's own code may run (``run_tree_code``: a Sphinx tree's conf.py, its extensions and the
    package autodoc imports; off by default)."""

    root: Path
    path: str
    run_tree_code: bool = False


class Tree(NamedTuple):
    """The documentation tree a document belongs to: its tool, the folder it is built from (Sphinx: the
    source folder built as the project, inside the corpus; MkDocs and Docusaurus: the configuration's
    folder, which may lie above the corpus) and its configuration file."""

    tool: str
    folder: Path
    config: Path


def tree_of(source: SourceFile) -> Tree | None:
    """The nearest tree (a ``conf.py``, an ``mkdocs.yml``, a ``docusaurus.config.*``) from the document's folder
    up to the corpus folder; else the one the corpus folder is part of (``tree_above``)."""
    root = Path(source.root).resolve()
    folder = (root / source.path).resolve().parent
    while True:
        found = _tree_at(folder, root)
        if found is not None:
            return found
        if folder == root or root not in folder.parents:
            break
        folder = folder.parent
    document = (root / source.path).resolve()
    for config, docs in docusaurus_sites(root):  # a site whose docs live beside it (website/ and docs/)
        if any(d == document.parent or d in document.parents for d in docs):
            return Tree(DOCUSAURUS, config.parent, config)
    return tree_above(root)


def _tree_at(folder: Path, root: Path) -> Tree | None:
    if (folder / "conf.py").is_file():
        return Tree(SPHINX, folder, folder / "conf.py")
    mkdocs = mkdocs_file(folder)
    if mkdocs is not None:
        return Tree(MKDOCS, folder, mkdocs)
    docusaurus = docusaurus_file(folder)
    if docusaurus is not None:
        return Tree(DOCUSAURUS, folder, docusaurus)
    return None


def tree_above(root: Path) -> Tree | None:
    """The tree a corpus folder is part of when its configuration lies above it (``ABOVE`` folders at most,
    never past a repository's top, a folder with ``.git``): an ``mkdocs.yml`` whose ``docs_dir`` is the corpus
    folder or holds it; a Sphinx ``conf.py`` whose source folder holds it (the corpus folder is then built as
    the project, its configuration read from there); a ``docusaurus.config.*``. The configuration is read,
    never indexed: the corpus is still only what lies inside its folder."""
    root = Path(root).resolve()
    for ancestor in list(root.parents)[:ABOVE]:
        mkdocs = mkdocs_file(ancestor)
        if mkdocs is not None:
            docs = (ancestor / str(mkdocs_config(ancestor).get("docs_dir") or "docs")).resolve()
            if docs == root or docs in root.parents:
                return Tree(MKDOCS, ancestor, mkdocs)
        if (ancestor / "conf.py").is_file():
            return Tree(SPHINX, root, ancestor / "conf.py")
        docusaurus = docusaurus_file(ancestor)
        if docusaurus is not None:
            return Tree(DOCUSAURUS, ancestor, docusaurus)
        for config, docs in docusaurus_sites(ancestor, depth=1):
            if any(d == root or d in root.parents for d in docs):
                return Tree(DOCUSAURUS, config.parent, config)
        if (ancestor / ".git").exists():
            break
    return None


def docusaurus_file(folder: Path) -> Path | None:
    """The folder's ``docusaurus.config.*``, if it has one."""
    return next((folder / name for name in DOCUSAURUS_CONFIGS if (folder / name).is_file()), None)


_DOCS_PATH = re.compile(r"""\bpath\s*:\s*['"]([^'"]+)['"]""")


def docusaurus_sites(folder: Path, depth: int = 2) -> list[tuple[Path, list[Path]]]:
    """The Docusaurus sites in ``folder`` and its subfolders (``depth`` levels), each (its configuration, the
    folders its content plugins read: every literal ``path: '...'`` of the configuration, and ``docs`` beside
    it, that exist). Read as text, never run; looked up again after ``SITES_SECONDS`` (every document of a
    corpus asks)."""
    return _docusaurus_sites(Path(folder), depth, int(time.monotonic() // SITES_SECONDS))


SITES_SECONDS = 30


@functools.lru_cache(maxsize=256)
def _docusaurus_sites(folder: Path, depth: int, _period: int) -> list[tuple[Path, list[Path]]]:
    sites = []
    for level in range(depth + 1):
        for config in sorted(p for name in DOCUSAURUS_CONFIGS for p in Path(folder).glob("*/" * level + name)
                             if "node_modules" not in p.parts):
            try:
                text = config.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            docs = {(config.parent / path).resolve() for path in [*_DOCS_PATH.findall(text), "docs"]}
            sites.append((config, sorted(d for d in docs if d.is_dir())))
    return sites


def trees_used(root: Path, paths: list[str], run_tree_code: bool = False) -> list[dict]:
    """Which tree configuration the documents at ``paths`` were read with: one entry per configuration file
    (its tool, its path relative to the corpus folder, ``../`` when above it, and how many documents; for an
    MkDocs tree, the Markdown extensions its pages were rendered without and why), and one for the documents
    of no tree (plain Markdown and reStructuredText), for the extraction summary."""
    root = Path(root).resolve()
    counts: dict[tuple[str, str], int] = {}
    folders: dict[tuple[str, str], Path] = {}
    for path in paths:
        tree = tree_of(SourceFile(root, path))
        key = (tree.tool, os.path.relpath(tree.config, root)) if tree else ("none", "")
        counts[key] = counts.get(key, 0) + 1
        if tree and tree.tool == MKDOCS:
            folders[key] = tree.folder
    entries = []
    for (tool, config), count in sorted(counts.items()):
        skipped = skipped_extensions(folders[tool, config], run_tree_code) if (tool, config) in folders else {}
        entries.append({"tool": tool, "configuration": config, "documents": count,
                        **({"skipped_extensions": skipped} if skipped else {})})
    return entries


# --- which files of a tree are its configuration, not documents ---------------------------------------

_CONFIGURATION_NAMES = re.compile(
    r"^(?:conf\.py|mkdocs\.ya?ml|mkdocs\.[\w.-]+\.ya?ml|docusaurus\.config\.[cm]?[jt]s|sidebars(?:\.[\w-]+)?\.(?:[cm]?[jt]s|json)"
    r"|_category_\.(?:json|ya?ml))$")
_EXTENSION_FOLDERS = ("_ext", "_exts", "_extensions", "ext", "exts", "sphinxext", "_sphinxext")


def configuration_kind(root: Path, path: str) -> str | None:
    """Why a corpus file is its tree's configuration (named after the tool), or None: a Sphinx ``conf.py`` and
    the local extensions beside it (a ``.py`` file in an ``_ext``-like folder next to a ``conf.py``), an
    ``mkdocs.yml``, a ``docusaurus.config.*``, Docusaurus sidebars and category files."""
    name = Path(path).name
    if _CONFIGURATION_NAMES.match(name):
        if name == "conf.py":
            return "Sphinx configuration"
        if name.startswith("mkdocs"):
            return "MkDocs configuration"
        if name.startswith("docusaurus"):
            return "Docusaurus configuration"
        return "Docusaurus sidebars" if name.startswith("sidebars") else "Docusaurus category"
    parts = Path(path).parts
    if name.endswith(".py"):
        for depth in range(len(parts) - 1):
            if parts[depth] in _EXTENSION_FOLDERS and (Path(root, *parts[:depth]) / "conf.py").is_file():
                return "Sphinx extension"
    return None


# --- what is left of source syntax in a canonical text ------------------------------------------------

_SYNTAX = re.compile("|".join([
    r":[a-z][\w-]*(?::[a-z][\w-]*)?:`[^`]+`",  # a Sphinx role, :func:`x` or :py:func:`x`
    r"\{[a-z][\w-]*\}`[^`]+`",  # a MyST role, {func}`x`
    r"^\s*\.\. [\w:-]+::",  # a reStructuredText directive line
    r"^\s*(?:```|~~~|:::|///|!!!|\?\?\?)",  # a fence or admonition marker
    r"\{\s*[#.][\w-]+[^}]*\}\s*$",  # an attribute list, { #id } or {.class}
    r"\{\*.*\*\}",  # an include marker, {* path *}
    r"--8<--",  # a snippet marker
]), re.MULTILINE)
# an MDX import or export left in the prose: a paragraph of its own (in a code block it is code)
_MDX_STATEMENT = re.compile(r"^\s*(?:import|export)\s+[\w{*].*(?:from\s+['\"]|=)")


def syntax_lines(text: str, code_spans: tuple[tuple[int, int], ...] | None = None) -> int:
    """How many lines of ``text`` outside its code blocks (``code_spans``, as the canonical builder records
    them) still carry source syntax (roles, directive lines, fences, attribute lists, include markers, MDX
    imports): code shows what its author wrote (a MyST or MDX example is not syntax left over). Without
    ``code_spans``, a paragraph of several lines is taken for code (prose is one line a paragraph)."""
    count, offset = 0, 0
    for line in text.split("\n"):
        start, offset = offset, offset + len(line) + 1
        if code_spans is not None:
            in_code = any(a <= start < b for a, b in code_spans)
        else:
            paragraph_start = text.rfind("\n\n", 0, start)
            paragraph_end = text.find("\n\n", start)
            in_code = "\n" in text[paragraph_start + 2 if paragraph_start >= 0 else 0:
                                    paragraph_end if paragraph_end >= 0 else len(text)]
        if not in_code and (_SYNTAX.search(line) or _MDX_STATEMENT.search(line)):
            count += 1
    return count


# --- Markdown: front matter, MDX, include markers -------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_MDX_MODULE_LINE = re.compile(r"^(?:import|export)\s.*$\n?", re.MULTILINE)
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
_COLON_FENCE = re.compile(r"^[ \t]*:::+[ \t]*(\w[\w-]*)?[ \t]*(.*)$", re.MULTILINE)
_BRACE_INCLUDE = re.compile(r"^[ \t]*\{\*\s*(\S+)(.*?)\*\}[ \t]*$", re.MULTILINE)
_SNIPPET = re.compile(r"""^[ \t]*-{1,}8<-{1,}[ \t]+["']?([^"'\n]+?)["']?[ \t]*$""", re.MULTILINE)
# the block form: a bare marker line, one file a line (``;`` comments one out), a bare marker line
_SNIPPET_BLOCK = re.compile(r"^[ \t]*-{1,}8<-{1,}[ \t]*\n(.*?)^[ \t]*-{1,}8<-{1,}[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_LANGUAGES = {".py": "python", ".js": "javascript", ".ts": "typescript", ".sh": "bash", ".toml": "toml",
                   ".yml": "yaml", ".yaml": "yaml", ".json": "json", ".html": "html", ".css": "css"}


def front_matter(text: str) -> tuple[dict, str]:
    """(the YAML front matter as a dict, the text after it); ({}, text) without one."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    import yaml

    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}, text  # not front matter after all: a thematic break, kept as written
    return (meta if isinstance(meta, dict) else {}), text[match.end():]


_CODE_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")
_LISTED_FENCE = re.compile(r"^([ \t]*(?:[-*+]|\d+[.)])[ \t]+)(`{3,}|~{3,})(.*)$")  # a fence opening a list item
_CODE_TITLE = re.compile(r"""\btitle=(?:"([^"]*)"|'([^']*)'|(\S+))""")
# Docusaurus' line-highlighting comments, dropped from code as Docusaurus drops them
_HIGHLIGHT_COMMENT = re.compile(
    r"^[ \t]*(?://|#|--|;|%|/\*|\{/\*|<!--)[ \t]*highlight-(?:next-line|start|end)[ \t]*(?:\*/\}?|-->)?[ \t]*$")
_ADMONITION_TITLE = re.compile(r"^\[(.*)\]\s*$")


def mdx_to_markdown(text: str) -> str:
    """MDX (Docusaurus; its ``.md`` pages too) as Markdown, as Docusaurus renders it: outside code fences,
    ``import``/``export`` lines and ``{/* */}`` comments go, and a ``:::note Title`` (or ``:::note[Title]``)
    fence keeps its title and body (fence lines go); inside code fences everything is code, but the
    ``// highlight-next-line``, ``highlight-start`` and ``highlight-end`` comments go, and a fence's
    ``title="..."`` becomes the caption above the code. Component tags are left to the HTML rules, which keep
    their children's text."""
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None

    def flush() -> None:
        block = _MDX_COMMENT.sub("", _without_module_statements(prose))
        out.append(_COLON_FENCE.sub(_admonition, block))
        prose.clear()

    for line in text.split("\n"):
        opening = _CODE_FENCE.match(line) or _LISTED_FENCE.match(line)
        if fence is None and opening:
            flush()
            lead, marker, info = opening.groups()
            title = _CODE_TITLE.search(info)
            if title:
                caption = next(group for group in title.groups() if group is not None)
                out.append(f"{lead}{caption}\n")  # in a list item, the caption opens the item
                lead = " " * len(lead)
                info = _CODE_TITLE.sub("", info).strip()
            out.append(f"{lead}{marker}{info}")
            fence = marker
        elif fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
                out.append(line)
            elif not _HIGHLIGHT_COMMENT.match(line):
                out.append(line)
        else:
            prose.append(line)
    flush()
    return "\n".join(out)


def _without_module_statements(lines: list[str]) -> str:
    """MDX prose without its ``import``/``export`` statements, a statement running over several lines (an
    ``import {a,\n b} from "x"`` or an exported object) taken out whole: until its braces close and it names
    where it comes from, or ends with ``;``."""
    kept, depth, inside = [], 0, False
    for line in lines:
        if not inside and _MDX_MODULE_LINE.match(line + "\n"):
            inside, depth = True, 0
        if inside:
            depth += line.count("{") + line.count("(") + line.count("[") - line.count("}") - line.count(")") \
                - line.count("]")
            if depth <= 0 and (line.rstrip().endswith(";") or re.search(r"""\bfrom\s+['"]""", line)
                               or not line.rstrip().endswith((",", "{", "(", "[", "=")) ):
                inside = False
            continue
        kept.append(line)
    return "\n".join(kept)


def _admonition(match: re.Match) -> str:
    title = match.group(2).strip()
    bracketed = _ADMONITION_TITLE.match(title)
    title = bracketed.group(1).strip() if bracketed else title
    return f"\n**{title}**\n" if title else "\n"


def resolve_includes(text: str, source: SourceFile, bases: list[Path]) -> tuple[str, int]:
    """Include markers replaced by the files they name (looked up from the document's folder, then each
    of ``bases``; never outside the corpus folder); (the text, markers dropped because their file is not
    in the snapshot)."""
    root = Path(source.root).resolve()
    here = (root / source.path).resolve().parent
    dropped = 0

    def found(name: str) -> Path | None:
        for base in (here, *bases):
            candidate = Path(os.path.normpath(base / name))
            if candidate.is_file() and root in candidate.resolve().parents:
                return candidate
        return None

    def code(match: re.Match) -> str:
        nonlocal dropped
        path = found(match.group(1))
        if path is None:
            dropped += 1
            return ""
        body = path.read_text(encoding="utf-8", errors="replace").rstrip("\n")
        return f"\n```{_CODE_LANGUAGES.get(path.suffix, '')}\n{body}\n```\n"

    def snippet_of(name: str) -> str:
        nonlocal dropped
        path = found(name.strip().strip("\"'"))
        if path is None:
            dropped += 1
            return ""
        body = path.read_text(encoding="utf-8", errors="replace")
        return body if path.suffix in (".md", ".markdown") else f"\n```{_CODE_LANGUAGES.get(path.suffix, '')}\n{body}\n```\n"

    def block(match: re.Match) -> str:
        names = [line.strip() for line in match.group(1).split("\n")]
        return "\n\n".join(snippet_of(name) for name in names if name and not name.startswith(";"))

    text = _SNIPPET_BLOCK.sub(block, text)
    return _SNIPPET.sub(lambda match: snippet_of(match.group(1)), _BRACE_INCLUDE.sub(code, text)), dropped


# --- MkDocs --------------------------------------------------------------------------------------------

MKDOCS_BASE_EXTENSIONS = [
    "admonition", "attr_list", "def_list", "footnotes", "tables", "abbr", "md_in_html", "toc",
    "pymdownx.superfences", "pymdownx.details", "pymdownx.tabbed", "pymdownx.blocks.admonition",
    "pymdownx.blocks.details", "pymdownx.blocks.tab",
]
# extensions that read files: the snippets' include markers are resolved by resolve_includes, inside the
# snapshot; b64 inlines image files as data (no text) from any folder it is given
_NOT_RENDERING = {"pymdownx.snippets": "its include markers are resolved inside the snapshot by this project",
                  "pymdownx.b64": "it reads image files from its base_path and gives no text"}
_CODE_NAMED = ("names code (module:attribute), which is imported and called only with evaluation.run_tree_code")
_NOT_KNOWN = ("not an extension of Python-Markdown or pymdown-extensions installed here (a tree's own or another "
              "package's module is imported only with evaluation.run_tree_code)")


def mkdocs_file(tree: Path) -> Path | None:
    """The folder's ``mkdocs.yml`` (or ``mkdocs.yaml``), if it has one."""
    return next((tree / name for name in ("mkdocs.yml", "mkdocs.yaml") if (tree / name).is_file()), None)


def mkdocs_config(tree: Path) -> dict:
    """The tree's mkdocs.yml (the tree has one: ``tree_of`` found it), read without running anything (``!!python/...`` tags and ``!ENV`` read as
    None)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    path = mkdocs_file(tree)
    try:
        config = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)  # noqa: S506 - SafeLoader subclass
    except (OSError, yaml.YAMLError):
        return {}
    return config if isinstance(config, dict) else {}


@functools.lru_cache(maxsize=1)
def known_extensions() -> dict[str, str]:
    """The Markdown extensions a tree may name without running its own code: {name: the installed module that
    provides it}. Python-Markdown's by entry point (``toc``) and by module (``markdown.extensions.toc``), and
    pymdown-extensions' modules (``pymdownx.superfences``, ``pymdownx.blocks.tab``), found from the installed
    packages' files, never by importing what a tree names."""
    import pkgutil
    from importlib.metadata import entry_points

    import markdown.extensions
    import pymdownx
    import pymdownx.blocks

    known: dict[str, str] = {}
    for point in entry_points(group="markdown.extensions"):
        if point.dist is not None and point.dist.metadata["Name"].lower() in ("markdown", "pymdown-extensions"):
            known[point.name] = point.value.split(":")[0]
    for package in (markdown.extensions, pymdownx, pymdownx.blocks):
        for module in pkgutil.iter_modules(package.__path__):
            if not module.name.startswith("_"):
                known[f"{package.__name__}.{module.name}"] = f"{package.__name__}.{module.name}"
    return known


def extension_name(name: str, run_tree_code: bool = False) -> tuple[str | None, str]:
    """(the name an extension of mkdocs.yml is loaded under, or None when it is not loaded; why not). A known
    extension (``known_extensions``) is loaded as named; ``known.module:ExtensionClass`` as its module, when the
    attribute is an Extension class of that installed module; any other ``module:attribute`` or unknown module
    only with ``run_tree_code`` (it imports and calls the tree's choice of code)."""
    known = known_extensions()
    module, _, attribute = name.partition(":")
    if module in known and attribute:
        import importlib

        from markdown.extensions import Extension

        found = getattr(importlib.import_module(known[module]), attribute, None)
        if isinstance(found, type) and issubclass(found, Extension) and found.__module__ == known[module]:
            return module, ""
    elif name in known:
        return name, ""
    if run_tree_code:
        return name, ""
    return None, _CODE_NAMED if attribute else _NOT_KNOWN


def mkdocs_extensions(config: dict, run_tree_code: bool = False) -> tuple[list[str], dict[str, dict], dict[str, str]]:
    """The Markdown extensions an MkDocs page is rendered with: the base set and the configured ones that
    load here, with their configurations, and those left out with why ({name as configured: reason}): one
    that names code or is not known (``extension_name``), one that reads files (``_NOT_RENDERING``), one that
    fails on a sample page."""
    import markdown

    names, configs, skipped = list(MKDOCS_BASE_EXTENSIONS), {"toc": {"permalink": False}}, {}
    for entry in config.get("markdown_extensions") or []:
        configured, options = (next(iter(entry.items())) if isinstance(entry, dict) and entry else (entry, None))
        if not isinstance(configured, str):
            continue
        name, why = extension_name(configured, run_tree_code)
        if name is None or name in _NOT_RENDERING:
            skipped[configured] = why or _NOT_RENDERING[name]
            continue
        options = {k: v for k, v in (options if isinstance(options, dict) else {}).items()
                   if v is not None and k not in ("permalink",)}
        try:  # loaded and run on a sample: some need MkDocs' own processors and fail only when they run
            markdown.Markdown(extensions=[*MKDOCS_BASE_EXTENSIONS, *([] if name in MKDOCS_BASE_EXTENSIONS else [name])],
                              extension_configs={name: options} if options else {}).convert("# a\n\nb `c` [d](e.md)\n")
        except Exception as error:  # noqa: BLE001 - an extension of a plugin not installed here, or a bad option
            skipped[configured] = f"does not load here ({type(error).__name__}: {str(error)[:120]})"
            continue
        if name not in names:
            names.append(name)
        if options:
            configs[name] = {**configs.get(name, {}), **options}
    return names, configs, skipped


_trees: dict[tuple[str, int, bool], tuple[dict, list[str], dict[str, dict], dict[str, str]]] = {}


def _mkdocs_tree(tree: Path, run_tree_code: bool = False) -> tuple[dict, list[str], dict[str, dict], dict[str, str]]:
    """The tree's configuration, its Markdown extensions and those skipped, found once per process and
    mkdocs.yml state."""
    path = mkdocs_file(tree)
    key = (str(path), path.stat().st_mtime_ns, run_tree_code)
    if key not in _trees:
        config = mkdocs_config(tree)
        _trees[key] = (config, *mkdocs_extensions(config, run_tree_code))
    return _trees[key]


def skipped_extensions(tree: Path, run_tree_code: bool = False) -> dict[str, str]:
    """The Markdown extensions an MkDocs tree's mkdocs.yml names that its pages are rendered without, and why."""
    return dict(_mkdocs_tree(tree, run_tree_code)[3])


def render_mkdocs(body: str, source: SourceFile, tree: Path) -> tuple[str, int, int]:
    """(an MkDocs page's HTML as its site renders the content, include markers dropped, blocks generated from
    code left without text); ``body`` is the page after its front matter. A ``/// name`` block no extension of
    the tree declares keeps its body (and its title); with the autorefs plugin (or mkdocstrings, which brings
    it), a ``[title][identifier]`` or ``[identifier][]`` reference is its title, as the site's link shows it;
    code annotation markers (``# (1)!``) are dropped from code. A ``::: identifier`` block (mkdocstrings,
    mkdocs-click: text generated by importing the documented code) gives no text and is counted."""
    import markdown

    config, names, configs, _skipped = _mkdocs_tree(tree, source.run_tree_code)
    docs = tree / str(config.get("docs_dir") or "docs")
    body, dropped = resolve_includes(body, source, [docs, tree])
    body, from_code = _FROM_CODE_BLOCK.subn("", body)
    body = _undeclared_blocks_opened(body, _declared_blocks(names, configs))
    try:
        html = markdown.Markdown(extensions=names, extension_configs=configs).convert(body)
    except Exception:  # noqa: BLE001 - a configured extension that fails on this page: the base set alone
        html = markdown.Markdown(extensions=MKDOCS_BASE_EXTENSIONS, extension_configs={"toc": {"permalink": False}}
                                 ).convert(body)
    if _uses_autorefs(config):
        html = autorefs_as_titles(html)
    return _without_annotation_markers(html), dropped, from_code


# mkdocstrings' (and mkdocs-click's) ``::: identifier`` line and the indented options below it
_FROM_CODE_BLOCK = re.compile(r"^:::[ \t]+[\w.:-]+[ \t]*\n(?:[ \t]+\S.*\n|[ \t]*\n)*", re.MULTILINE)


# the blocks pymdownx.blocks declares by default (its admonition and details types, and the other blocks)
_DEFAULT_BLOCKS = {"admonition", "details", "tab", "html", "definition", "caption", "figure-caption",
                   "table-caption", "note", "attention", "caution", "danger", "error", "tip", "hint", "warning",
                   "important", "seealso", "info", "abstract", "success", "question", "failure", "bug", "example",
                   "quote", "todo", "summary", "tldr", "check", "done", "help", "faq", "fail", "missing",
                   "cite"}
_BLOCK_LINE = re.compile(r"^[ \t]*(/{3,})[ \t]*([\w-]*)[ \t]*(?:\|[ \t]*(.*?))?[ \t]*$")


def _declared_blocks(names: list[str], configs: dict[str, dict]) -> set[str]:
    """The ``/// name`` blocks the tree's extensions declare: the defaults and the ``types`` configured for
    pymdownx.blocks' admonition and details (a name, or a mapping with one)."""
    declared = set(_DEFAULT_BLOCKS)
    for name in names:
        for kind in (configs.get(name) or {}).get("types") or []:
            declared.add(kind.get("name") if isinstance(kind, dict) else str(kind))
    return declared


def _undeclared_blocks_opened(body: str, declared: set[str]) -> str:
    """``body`` with each ``/// name`` block no extension declares opened: its fence lines and its options (the
    indented lines right below the opening) go, its title (after ``|``) stays as a paragraph, its body as
    written. Code fences are left alone."""
    out, stack, fence, options = [], [], None, False
    for line in body.split("\n"):
        if options:  # the opened block's options (indented YAML right below its opening line) are no text
            if line.startswith((" ", "\t")) and line.strip():
                continue
            options = False
        code = _CODE_FENCE.match(line)
        if fence is not None:
            if code and code.group(2)[0] == fence[0] and len(code.group(2)) >= len(fence) and not code.group(3).strip():
                fence = None
            out.append(line)
            continue
        if code:
            fence = code.group(2)
            out.append(line)
            continue
        block = _BLOCK_LINE.match(line)
        if block and block.group(2):  # an opening line, /// name | title
            undeclared = block.group(2) not in declared
            stack.append(undeclared)
            if undeclared:
                out.extend(["", f"**{block.group(3)}**", ""] if block.group(3) else [""])
                options = True
                continue
        elif block and not block.group(3) and stack:  # a closing line, ///
            if stack.pop():
                out.append("")
                continue
        out.append(line)
    return "\n".join(out)


def _uses_autorefs(config: dict) -> bool:
    names = [next(iter(entry)) if isinstance(entry, dict) else entry for entry in config.get("plugins") or []]
    return any(name in ("autorefs", "mkdocstrings") for name in names if isinstance(name, str))


_PRE = re.compile(r"(<pre\b.*?</pre>)", re.DOTALL)
_AUTOREF = re.compile(r"\[((?:[^\[\]<]|<(?!/?(?:p|div|li|pre)\b)[^>]*>)+?)\]\[([^\[\]\s<>]*)\]")


def autorefs_as_titles(html: str) -> str:
    """mkdocs-autorefs' references, left literal by Python-Markdown (their identifier is no link of the page),
    as the site shows them: ``[title][identifier]`` is the title, ``[identifier][]`` the identifier."""
    parts = _PRE.split(html)
    return "".join(part if part.startswith("<pre") else _AUTOREF.sub(lambda m: m.group(1), part) for part in parts)


_ANNOTATION = re.compile(r"[ \t]*(?:#|//|/\*|;|--|&lt;!--)[ \t]*\(\d+\)!?[ \t]*(?:\*/|--&gt;)?[ \t]*"
                         r"(?=(?:</span>)*(?:\n|</code>))")


def _without_annotation_markers(html: str) -> str:
    """Code annotation markers (Material's ``# (1)!`` at a code line's end) dropped from the code blocks."""
    parts = _PRE.split(html)
    return "".join(_ANNOTATION.sub("", part) if part.startswith("<pre") else part for part in parts)
