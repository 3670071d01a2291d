"""The evaluation page over HTTP: the report folder's files by GET and HEAD on 127.0.0.1, nothing else (no
folder listing, no path out of the folder, no symbolic link out of it, nothing written), and it stops."""

import http.client
import os
import socket

import pytest

from rag_assets.lib.evaluate.page import page_address
from rag_assets.runner.report_server import serve_report


def _get(port: int, path: str, method: str = "GET") -> tuple[int, bytes, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, response.read(), {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()


@pytest.fixture
def served(tmp_path):
    report = tmp_path / "home" / "report"
    (report / "assets").mkdir(parents=True)
    (report / "index.html").write_text("<p>Ship it</p>")
    (report / "assets" / "page.js").write_text("const D = {};")
    (tmp_path / "home" / "metrics.duckdb").write_text("not for the browser")
    (tmp_path / "secret.txt").write_text("outside")
    os.symlink(tmp_path / "secret.txt", report / "link.txt")
    server = serve_report(report, 0)
    yield server, tmp_path
    server.stop()


def test_the_page_and_what_it_loads_are_served(served):
    server, _ = served
    assert server.address == page_address(server.port) == f"http://127.0.0.1:{server.port}/index.html"
    status, body, headers = _get(server.port, "/index.html")
    assert (status, body) == (200, b"<p>Ship it</p>") and headers["content-type"].startswith("text/html")
    assert headers["cache-control"] == "no-store"  # a new evaluation's page, never the browser's old copy
    assert _get(server.port, "/")[:2] == (200, b"<p>Ship it</p>")  # the folder's address is its page
    assert _get(server.port, "/assets/page.js?v=2")[:2] == (200, b"const D = {};")
    assert _get(server.port, "/index.html", "HEAD")[0] == 200


@pytest.mark.parametrize("path", ["/../metrics.duckdb", "/..%2fmetrics.duckdb", "/%2e%2e/secret.txt",
                                  "/../../secret.txt", "/link.txt", "/assets/", "/assets", "/missing.html"])
def test_nothing_outside_the_report_folder_and_no_listing(served, path):
    server, _ = served
    status, body, _ = _get(server.port, path)
    assert status == 404, (path, status, body)
    assert b"outside" not in body and b"not for the browser" not in body and b"page.js" not in body


def test_nothing_is_written(served):
    server, tmp_path = served
    for method in ("POST", "PUT", "DELETE"):
        assert _get(server.port, "/index.html", method)[0] == 501
    assert (tmp_path / "home" / "report" / "index.html").read_text() == "<p>Ship it</p>"


def test_it_listens_on_127_0_0_1_only_and_stops(served):
    server, _ = served
    assert server.server.server_address[0] == "127.0.0.1"
    port = server.port
    server.stop()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_a_taken_port_is_an_oserror(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            serve_report(tmp_path / "report", taken.getsockname()[1])
