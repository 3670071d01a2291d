"""Where a command's libraries keep their caches (``environment.keep_scratch_in``): inside the storage folder, or,
where it cannot be written, nowhere for a cache that can be turned off (pure logic: the process's environment)."""

from __future__ import annotations

import contextlib
import os
import tempfile

import pytest

from rag_assets import environment


@contextlib.contextmanager
def command_process(monkeypatch):
    """As a command's process, and left as it was: the test worker's environment (TMPDIR above all: a later
    test's Chromium puts its socket under it), ``tempfile``'s folder and the exit handlers are restored."""
    import atexit

    before = dict(os.environ)
    for variable in [*environment.LIBRARY_CACHES, *environment.UNCACHED, "TMPDIR"]:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setitem(environment._COMMAND, "started", True)
    monkeypatch.setattr(tempfile, "tempdir", tempfile.tempdir)
    monkeypatch.setattr(atexit, "register", lambda *args, **kwargs: None)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture
def as_command(monkeypatch):
    with command_process(monkeypatch):
        yield


def test_the_command_fixture_leaves_the_worker_as_it_was(tmp_path, monkeypatch):
    """What the fixture undoes is undone (the CI failure it fixes: TMPDIR left pointing into a test's folder)."""
    before, folder = dict(os.environ), tempfile.gettempdir()
    with command_process(monkeypatch):
        environment.keep_scratch_in(tmp_path / "caches", tmp_path / "tmp", lambda pid: True)
        assert os.environ["TMPDIR"].startswith(str(tmp_path))
    assert dict(os.environ) == before and tempfile.gettempdir() == folder


def test_a_writable_storage_folder_holds_every_cache_and_the_temporary_folder(tmp_path, as_command):
    mine = environment.keep_scratch_in(tmp_path / "caches", tmp_path / "tmp", lambda pid: True)
    assert mine is not None and mine.parent == tmp_path / "tmp" and os.environ["TMPDIR"] == str(mine)
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path / "caches" / "tiktoken")
    assert all(os.environ[variable].startswith(str(tmp_path / "caches")) for variable in environment.LIBRARY_CACHES)


def test_where_the_storage_folder_cannot_be_written_tiktoken_caches_nothing(tmp_path, as_command):
    (tmp_path / "caches").write_text("a file where the folder would be, as a read-only mount refuses it")
    assert environment.keep_scratch_in(tmp_path / "caches", tmp_path / "tmp", lambda pid: True) is None
    assert os.environ["TIKTOKEN_CACHE_DIR"] == ""  # tiktoken reads its installed rank file, copying it nowhere
    assert "TMPDIR" not in os.environ


def test_a_cache_folder_the_user_set_is_kept_even_where_the_storage_folder_cannot_be_written(tmp_path, as_command,
                                                                                            monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "mine"))
    (tmp_path / "caches").write_text("in the way")
    environment.keep_scratch_in(tmp_path / "caches", tmp_path / "tmp", lambda pid: True)
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path / "mine")


def test_a_process_that_is_not_a_command_is_left_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setitem(environment._COMMAND, "started", False)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    assert environment.keep_scratch_in(tmp_path / "caches", tmp_path / "tmp", lambda pid: True) is None
    assert "TIKTOKEN_CACHE_DIR" not in os.environ and not (tmp_path / "caches").exists()


def test_a_process_is_a_command_only_once_the_command_line_said_so(monkeypatch):
    monkeypatch.setitem(environment._COMMAND, "started", False)
    assert environment.is_a_command() is False
    environment.started_as_command()
    assert environment.is_a_command() is True
