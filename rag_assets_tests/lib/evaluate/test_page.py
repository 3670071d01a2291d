"""The evaluation page's address: served by `rag-assets ui` on 127.0.0.1, naming no folder."""

from rag_assets.lib.evaluate.page import PAGE_HOST, page_address


def test_the_address_is_the_loopback_port_and_names_no_folder():
    assert PAGE_HOST == "127.0.0.1"
    assert page_address(3001) == "http://127.0.0.1:3001/index.html"
    assert page_address(40123).endswith(":40123/index.html") and "file:" not in page_address(40123)
