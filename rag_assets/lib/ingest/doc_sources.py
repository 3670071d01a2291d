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

import os
import re
from dataclasses import dataclass
from pathlib import Path

SPHINX, MKDOCS = "sphinx", "mkdocs"


@dataclass(frozen=True)
class SourceFile:
    """Where a document lives: the corpus folder and its path under it (for the tree it belongs to)."""

    root: Path
    path: str


def tree_of(source: SourceFile) -> tuple[str, Path] | None:
    """(SPHINX or MKDOCS, the folder of its conf.py or mkdocs.yml), nearest first, up to the corpus folder."""
    root = Path(source.root).resolve()
    folder = (root / source.path).resolve().parent
    while True:
        if (folder / "conf.py").is_file():
            return SPHINX, folder
        if mkdocs_file(folder) is not None:
            return MKDOCS, folder
        if folder == root or root not in folder.parents:
            return None
        folder = folder.parent


# --- what is left of source syntax in a canonical text ------------------------------------------------

_SYNTAX = re.compile("|".join([
    r":[a-z][\w-]*(?::[a-z][\w-]*)?:`[^`]+`",  # a Sphinx role, :func:`x` or :py:func:`x`
    r"\{[a-z][\w-]*\}`[^`]+`",  # a MyST role, {func}`x`
    r"^\s*\.\. [\w:-]+::",  # a reStructuredText directive line
    r"^\s*(?:```|~~~|:::|///|!!!|\?\?\?)",  # a fence or admonition marker
    r"\{\s*[#.][\w-]+[^}]*\}\s*$",  # an attribute list, { #id } or {.class}
    r"\{\*.*\*\}",  # an include marker, {* path *}
    r"--8<--",  # a snippet marker
    r"^\s*(?:import|export)\s+[\w{*].*(?:from\s+['\"]|=)",  # an MDX import or export
]), re.MULTILINE)


def syntax_lines(text: str) -> int:
    """How many lines of ``text`` still carry source syntax (roles, directive lines, fences, attribute
    lists, include markers, MDX imports)."""
    return sum(1 for line in text.split("\n") if _SYNTAX.search(line))


# --- Markdown: front matter, MDX, include markers -------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_MDX_MODULE_LINE = re.compile(r"^(?:import|export)\s.*$\n?", re.MULTILINE)
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
_COLON_FENCE = re.compile(r"^:::+[ \t]*(\w[\w-]*)?[ \t]*(.*)$", re.MULTILINE)
_BRACE_INCLUDE = re.compile(r"^[ \t]*\{\*\s*(\S+)(.*?)\*\}[ \t]*$", re.MULTILINE)
_SNIPPET = re.compile(r"""^[ \t]*-{1,}8<-{1,}[ \t]+["']?([^"'\n]+?)["']?[ \t]*$""", re.MULTILINE)
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


def mdx_to_markdown(text: str) -> str:
    """MDX (Docusaurus) as Markdown: ``import``/``export`` lines and ``{/* */}`` comments go; a ``:::note
    Title`` fence keeps its title and body (fence lines go); component tags are left to the HTML rules,
    which keep their children's text."""
    text = _MDX_COMMENT.sub("", _MDX_MODULE_LINE.sub("", text))
    return _COLON_FENCE.sub(lambda m: f"\n**{m.group(2).strip()}**\n" if m.group(2).strip() else "\n", text)


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

    def snippet(match: re.Match) -> str:
        nonlocal dropped
        path = found(match.group(1).strip())
        if path is None:
            dropped += 1
            return ""
        body = path.read_text(encoding="utf-8", errors="replace")
        return body if path.suffix in (".md", ".markdown") else f"\n```{_CODE_LANGUAGES.get(path.suffix, '')}\n{body}\n```\n"

    return _SNIPPET.sub(snippet, _BRACE_INCLUDE.sub(code, text)), dropped


# --- MkDocs --------------------------------------------------------------------------------------------

MKDOCS_BASE_EXTENSIONS = [
    "admonition", "attr_list", "def_list", "footnotes", "tables", "abbr", "md_in_html", "toc",
    "pymdownx.superfences", "pymdownx.details", "pymdownx.tabbed", "pymdownx.blocks.admonition",
    "pymdownx.blocks.details", "pymdownx.blocks.tab",
]
_NOT_RENDERING = ("pymdownx.snippets",)  # include markers are resolved by resolve_includes, inside the snapshot


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


def mkdocs_extensions(config: dict) -> tuple[list[str], dict[str, dict]]:
    """The Markdown extensions an MkDocs page is rendered with: the base set and the configured ones that
    load here, with their configurations (those that do not load are left out)."""
    import markdown

    names, configs = list(MKDOCS_BASE_EXTENSIONS), {"toc": {"permalink": False}}
    for entry in config.get("markdown_extensions") or []:
        name, options = (next(iter(entry.items())) if isinstance(entry, dict) else (entry, None))
        if not isinstance(name, str) or name in _NOT_RENDERING:
            continue
        options = {k: v for k, v in (options or {}).items() if v is not None and k not in ("permalink",)}
        try:  # loaded and run on a sample: some need MkDocs' own processors and fail only when they run
            markdown.Markdown(extensions=[*MKDOCS_BASE_EXTENSIONS, name],
                              extension_configs={name: options} if options else {}).convert("# a\n\nb `c` [d](e.md)\n")
        except Exception:  # noqa: BLE001 - an extension of a plugin not installed here, or a bad option
            continue
        if name not in names:
            names.append(name)
        if options:
            configs[name] = {**configs.get(name, {}), **options}
    return names, configs


_trees: dict[tuple[str, int], tuple[dict, list[str], dict[str, dict]]] = {}


def _mkdocs_tree(tree: Path) -> tuple[dict, list[str], dict[str, dict]]:
    """The tree's configuration and Markdown extensions, found once per process and mkdocs.yml state."""
    path = mkdocs_file(tree)
    key = (str(path), path.stat().st_mtime_ns)
    if key not in _trees:
        config = mkdocs_config(tree)
        _trees[key] = (config, *mkdocs_extensions(config))
    return _trees[key]


def render_mkdocs(body: str, source: SourceFile, tree: Path) -> tuple[str, int]:
    """(an MkDocs page's HTML as its site renders the content, include markers dropped); ``body`` is the
    page after its front matter."""
    import markdown

    config, names, configs = _mkdocs_tree(tree)
    docs = tree / str(config.get("docs_dir") or "docs")
    body, dropped = resolve_includes(body, source, [docs, tree])
    try:
        return markdown.Markdown(extensions=names, extension_configs=configs).convert(body), dropped
    except Exception:  # noqa: BLE001 - a configured extension that fails on this page: the base set alone
        return markdown.Markdown(extensions=MKDOCS_BASE_EXTENSIONS, extension_configs={"toc": {"permalink": False}}
                                 ).convert(body), dropped
