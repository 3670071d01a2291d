"""One page per evaluation: ``report/index.html``, a single self-contained file a person opens in a browser
(from the storage folder, or downloaded from the object store): no network, no server, its data inside it.

The data (``page_data.gather``) is embedded gzip-compressed and base64-encoded and decompressed by the
browser (``DecompressionStream``); the page's script (``page.js``) and style (``page.css``) are inlined from
this package. It shows, in order: the decision, success against the context budget (a click on a line puts
that configuration side by side with the pick), success@k and the pick's refusal trade-off, the full
comparison (sortable, filterable), two configurations side by side with the needles each wins and loses, why
each miss missed, and the history with two runs side by side.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import os
from pathlib import Path

import duckdb

from rag_assets.lib.evaluate.page_data import gather
from rag_assets.lib.store.object_store import object_store, publish

PAGE = "index.html"
HERE = Path(__file__).parent


def render(data: dict) -> str:
    """The page's HTML, with ``data`` inside it."""
    payload = base64.b64encode(gzip.compress(json.dumps(data, separators=(",", ":")).encode("utf-8"), mtime=0))
    template = (HERE / "page.html").read_text(encoding="utf-8")
    return (template.replace("/*STYLE*/", (HERE / "page.css").read_text(encoding="utf-8"))
            .replace("/*SCRIPT*/", (HERE / "page.js").read_text(encoding="utf-8"))
            .replace("{{TITLE}}", html.escape(f"{data['title']}: run {data['run']['run_id']}"))
            .replace("{{DATA}}", payload.decode("ascii")))


def write_page(database: Path, home: Path, folder: Path | None = None) -> Path:
    """Write ``report/index.html`` of the newest evaluation in ``database`` (read-only), through a temporary
    file and a rename (after an upload, with an object store): a reader never sees half a page."""
    folder = Path(folder or Path(home) / "report")
    folder.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(database), read_only=True) as connection:
        text = render(gather(connection, Path(home)))
    path = folder / PAGE
    scratch = folder / f".{PAGE}.{os.getpid()}.tmp"
    scratch.write_text(text, encoding="utf-8")
    publish(object_store(Path(home)), scratch, path)
    return path


PAGE_HOST = "127.0.0.1"  # `rag-assets ui` serves the page there only (runner/report_server.py): it holds the corpus


def page_address(port: int) -> str:
    """The evaluation page's address while `rag-assets ui` runs, serving ``report/`` on ``port``: it names no
    folder, so a copied or moved storage folder's UI opens its own page."""
    return f"http://{PAGE_HOST}:{port}/index.html"
