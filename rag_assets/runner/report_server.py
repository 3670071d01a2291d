"""The evaluation page over HTTP, beside the Dagster UI.

`rag-assets ui` serves the storage folder's ``report/`` (the page ``evaluate`` writes: ``index.html`` and what
it loads) on 127.0.0.1, so the metrics asset's ``evaluation_page`` entry can be an ``http://`` address that a
click in the UI opens (a browser does not follow a ``file://`` link from an ``http://`` page). The address names
no folder: whichever storage folder `ui` was started on is the one served, so a copied or moved storage folder
points at itself.

Only files under ``report/`` are served, and only by GET and HEAD: no listing of a folder, no path that leaves
it (``..``, an absolute path, a symbolic link out of it), nothing written.
"""

from __future__ import annotations

import http.server
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from rag_assets.lib.evaluate.page import PAGE_HOST as HOST
from rag_assets.lib.evaluate.page import page_address


class ReportHandler(http.server.SimpleHTTPRequestHandler):
    """Files under the report folder, GET and HEAD only; a folder or a path outside it is 404."""

    def __init__(self, *args, directory: str, **kwargs):
        super().__init__(*args, directory=directory, **kwargs)

    def send_head(self):
        root = Path(self.directory).resolve()
        wanted = Path(self.translate_path(self.path)).resolve()
        if wanted == root:  # the folder's own address is its page
            wanted = root / "index.html"
        if not wanted.is_relative_to(root) or not wanted.is_file():
            self.send_error(404, "Not found: only the evaluation page's files are served")
            return None
        self.path = "/" + wanted.relative_to(root).as_posix()
        return super().send_head()

    def list_directory(self, path):  # never reached (send_head refuses folders); kept shut all the same
        self.send_error(404, "Not found")
        return None

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")  # a new evaluation's page, not the browser's copy
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name; the UI's own log is enough
        pass


@dataclass
class ReportServer:
    """A running server of one report folder; ``stop()`` ends it."""

    server: http.server.ThreadingHTTPServer
    thread: threading.Thread
    folder: Path

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def address(self) -> str:
        return page_address(self.port)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def serve_report(folder: Path, port: int) -> ReportServer:
    """Serve ``folder`` (a storage folder's ``report/``, created if missing) on 127.0.0.1:``port`` from a daemon
    thread; ``port`` 0 picks a free one. OSError when the port is taken."""
    folder.mkdir(parents=True, exist_ok=True)
    handler = partial(ReportHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer((HOST, port), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="report-server", daemon=True)
    thread.start()
    return ReportServer(server, thread, folder)
