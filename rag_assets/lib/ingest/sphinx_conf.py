"""A Sphinx tree's configuration read without running it: the extensions ``conf.py`` lists, the folders it puts
on ``sys.path``, and the object types its local extensions declare (``app.add_object_type`` and
``app.add_crossref_type``, e.g. Scrapy's ``.. setting:: NAME``), so that a build that does not execute the
tree's code still knows its directives. Only literal values are read (``ast``): a list built by code, a path
computed at run time or a type registered in a loop is not seen, and ``unread`` says which extensions could
not be read that way.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

OBJECT_TYPE, CROSSREF_TYPE = "object", "crossref"


@dataclass
class ConfRead:
    """What a ``conf.py`` says, read as text."""

    extensions: list[str] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)  # folders it adds to sys.path, that exist
    object_types: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, directive, role)
    unread: list[str] = field(default_factory=list)  # local extensions found but not parseable


def _strings(node: ast.AST) -> list[str]:
    """The string literals of a list or tuple literal (nothing for anything else)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _last_string(node: ast.AST) -> str | None:
    """The last string literal inside an expression: ``os.path.abspath("_ext")``, ``Path(__file__).parent /
    "_ext"``, ``".."``."""
    found = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return found[-1] if found else None


def _target(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def read_conf(conf: Path) -> ConfRead:
    """The literal parts of ``conf``: ``extensions = [...]`` (and ``+=``, ``.append``, ``.extend``), and the
    folders of ``sys.path.insert``/``append`` calls, relative to the configuration's folder."""
    read = ConfRead()
    try:
        tree = ast.parse(conf.read_text(encoding="utf-8", errors="replace"), str(conf))
    except (OSError, SyntaxError, ValueError):
        return read
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(_target(t) == "extensions" for t in node.targets):
            read.extensions = _strings(node.value)
        elif isinstance(node, ast.AugAssign) and _target(node.target) == "extensions":
            read.extensions += _strings(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "extensions" and node.args:
                if node.func.attr == "append" and isinstance(node.args[0], ast.Constant):
                    read.extensions.append(str(node.args[0].value))
                elif node.func.attr == "extend":
                    read.extensions += _strings(node.args[0])
            elif (isinstance(owner, ast.Attribute) and owner.attr == "path" and isinstance(owner.value, ast.Name)
                  and owner.value.id == "sys" and node.func.attr in ("insert", "append") and node.args):
                literal = _last_string(node.args[-1])
                folder = (conf.parent / literal).resolve() if literal is not None else conf.parent.resolve()
                if folder.is_dir() and folder not in read.paths:
                    read.paths.append(folder)
    for name in read.extensions:
        module = local_module(name, [conf.parent, *read.paths])
        if module is None:
            continue
        try:
            read.object_types += declared_object_types(module)
        except (OSError, SyntaxError, ValueError):
            read.unread.append(name)
    return read


def local_module(name: str, folders: list[Path]) -> Path | None:
    """The file of an extension that lives beside the tree (not an installed package), or None."""
    relative = Path(*name.split("."))
    for folder in folders:
        for candidate in (folder / relative.with_suffix(".py"), folder / relative / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def declared_object_types(module: Path) -> list[tuple[str, str, str]]:
    """The ``add_object_type(directive, role, ...)`` and ``add_crossref_type(directive, role, ...)`` calls of a
    module with literal names, as (kind, directive, role)."""
    found = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8", errors="replace"), str(module))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("add_object_type", "add_crossref_type")):
            continue
        names = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args[:2]]
        keywords = {k.arg: k.value.value for k in node.keywords
                    if isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)}
        directive = keywords.get("directivename", names[0] if names else None)
        role = keywords.get("rolename", names[1] if len(names) > 1 else None)
        if directive and role:
            found.append((OBJECT_TYPE if node.func.attr == "add_object_type" else CROSSREF_TYPE, directive, role))
    return found


def types_extension(object_types: list[tuple[str, str, str]]) -> str:
    """The source of a Sphinx extension that declares ``object_types`` as the tree's own extension does."""
    calls = "\n".join(f"    app.add_{'object' if kind == OBJECT_TYPE else 'crossref'}_type({directive!r}, {role!r})"
                      for kind, directive, role in object_types)
    return f"def setup(app):\n{calls or '    pass'}\n    return {{'parallel_read_safe': True}}\n"
