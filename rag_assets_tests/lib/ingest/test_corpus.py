import shutil

import pytest

from rag_assets.lib.ingest.corpus import CorpusError, scan_corpus, snapshot_id
from rag_assets.settings import DEFAULT_CORPUS_DIR


def test_manifest_rows(tiny_corpus):
    entries = scan_corpus(tiny_corpus)
    assert [e.path for e in entries] == ["fridge-notes.txt", "guide/kettles.html", "toasters.html"]
    assert [e.format for e in entries] == ["text", "html", "html"]
    assert all(len(e.sha256) == 64 and e.size > 0 for e in entries)


def test_snapshot_id_is_stable_and_changes_with_a_file(tiny_corpus, tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, copy)
    first = snapshot_id(scan_corpus(copy))
    assert snapshot_id(scan_corpus(copy)) == first
    (copy / "toasters.html").write_text((copy / "toasters.html").read_text() + " ")
    assert snapshot_id(scan_corpus(copy)) != first


def test_hidden_files_are_not_documents(tiny_corpus, tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, copy)
    (copy / ".DS_Store").write_bytes(b"\x00\x01")
    assert len(scan_corpus(copy)) == 3


def test_missing_folder_names_it(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(CorpusError, match=str(missing)):
        scan_corpus(missing)


def test_folder_without_readable_document_names_it(tmp_path):
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    with pytest.raises(CorpusError, match=f"{tmp_path}.*no readable document"):
        scan_corpus(tmp_path)


def test_default_corpus_has_26_pages():
    entries = scan_corpus(DEFAULT_CORPUS_DIR)
    assert len(entries) == 26
    assert {e.format for e in entries} == {"html"}
