"""MkDocs hook: figures, settings and the project's own Markdown files, put into the pages when the site
is built, so that nothing the benchmarks measured is typed a second time.

In a page:

- ``{{ figure FILE.path.to.value }}``: a value of ``docs/figures/FILE.json``, written by a script in
  ``bench/`` (``default_run.json`` by bench/default_run.py, ``setup.json`` by bench/setup_times.py);
- ``{{ settings_table }}``: every setting, its variable and default, from ``rag_assets.settings``;
- ``{{ include PATH }}``: a Markdown file of the project (BENCHMARKS.md, CHANGELOG.md), its first
  heading dropped.

A placeholder that names nothing fails the build, naming the page and the placeholder.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
PROJECT = DOCS.parent
FIGURES = DOCS / "figures"
PLACEHOLDER = re.compile(r"\{\{\s*(figure|settings_table|include)\s*([^}]*?)\s*\}\}")


class MissingFigure(LookupError):
    """A placeholder names a figure file or value that does not exist."""


def figure(path: str):
    """The value at ``FILE.key.key`` of ``docs/figures/FILE.json`` (keys may hold spaces, not dots)."""
    name, *keys = path.split(".")
    file = FIGURES / f"{name}.json"
    if not file.is_file():
        raise MissingFigure(f"{file} does not exist: run the bench script that writes it")
    value = json.loads(file.read_text(encoding="utf-8"))
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise MissingFigure(f"{path}: no {key!r} in {file.name}")
        value = value[key]
    return value


def settings_table() -> str:
    sys.path.insert(0, str(PROJECT))
    from rag_assets.lib.formats.markdown import markdown_table
    from rag_assets.settings import table

    return markdown_table([("variable", lambda r: f"`{r[0]}`"), ("setting", lambda r: f"`{r[1]}`"),
                           ("default", lambda r: f"`{r[2]}`" if r[2] else "(empty)"),
                           ("what it does", lambda r: r[3].replace("|", "\\|"))], table())


def include(path: str) -> str:
    text = (PROJECT / path).read_text(encoding="utf-8")
    return re.sub(r"\A# .*\n", "", text)


def render(markdown: str, where: str = "") -> str:
    def replace(match: re.Match) -> str:
        kind, argument = match.group(1), match.group(2)
        try:
            if kind == "figure":
                return str(figure(argument))
            if kind == "settings_table":
                return settings_table()
            return include(argument)
        except (MissingFigure, OSError) as error:
            raise ValueError(f"{where}: {match.group(0)}: {error}") from None

    return PLACEHOLDER.sub(replace, markdown)


def on_page_markdown(markdown, page, config, files):  # noqa: ARG001 - MkDocs' hook signature
    return render(markdown, page.file.src_path)
