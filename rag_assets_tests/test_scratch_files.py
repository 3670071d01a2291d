"""Nothing is written outside the storage folder: matplotlib's, onnxruntime's, tiktoken's and PyTorch's caches
live under `caches/`, and every temporary file (Sphinx's builds, onnxruntime's session file) under
`tmp/<host>.<pid>/`, which a later command removes once its process is gone (a kill -9 cannot clean its own)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets_tests.conftest import FIXTURES
from rag_assets_tests.servers import cli, tiny_home_env

pytestmark = [pytest.mark.integration]


def written(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def test_nothing_is_written_outside_the_storage_folder_and_a_killed_commands_files_are_removed(tmp_path):
    home, user, system_tmp = tmp_path / "home", tmp_path / "user", tmp_path / "system-tmp"
    user.mkdir()
    system_tmp.mkdir()
    env = {name: value for name, value in tiny_home_env(home).items()
           if name not in ("XDG_CACHE_HOME", "MPLCONFIGDIR", "TIKTOKEN_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR",
                           "TRITON_CACHE_DIR")} | {"HOME": str(user), "TMPDIR": str(system_tmp)}
    # a command killed with kill -9 while it had temporary files (as a Sphinx build has)
    killed = subprocess.run([sys.executable, "-c", (
        "import os, signal, tempfile, pathlib\n"
        "from rag_assets.environment import started_as_command\n"
        "from rag_assets.lib.store.paths import keep_scratch_in\n"
        "started_as_command()\n"
        f"mine = keep_scratch_in(pathlib.Path({str(home)!r}))\n"
        "pathlib.Path(tempfile.mkdtemp(prefix='rag-assets-sphinx-'), 'page.html').write_text('x')\n"
        "print(mine, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n")], env=env, capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL
    left = Path(killed.stdout.strip())
    assert left.parent == home / "tmp" and list(left.glob("rag-assets-sphinx-*/page.html"))

    # a model run by onnxruntime, the refusal figures by matplotlib, tokens counted by tiktoken
    run = cli(env, "evaluate", "--models", "paraphrase-MiniLM-L3-v2", "--strategies", "boundaries")
    assert run.returncode == 0, run.stderr[-3000:]
    assert not left.exists()  # removed by the next command
    # a Sphinx tree read by `needles suggest` (Sphinx builds into a temporary folder)
    suggest = cli(env, "needles", "suggest", str(tmp_path / "drafted.jsonl"), "--corpus",
                  str(FIXTURES / "doc_trees" / "sphinx"), "--no-meaning-check")
    assert suggest.returncode == 0, suggest.stderr[-3000:]
    assert written(user) == [] and written(system_tmp) == []
    caches = {path.name for path in (home / "caches").iterdir()}
    assert {"matplotlib", "xdg", "tiktoken"} <= caches
    assert list((home / "caches" / "xdg").rglob("deviceid"))  # onnxruntime's, where the user's cache was
    assert not [path for path in (home / "tmp").iterdir()]  # each command removed its own at exit
    assert not os.environ.get("TMPDIR", "").startswith(str(home))  # this process was not changed


def test_a_process_that_only_imports_rag_assets_keeps_its_environment(tmp_path):
    import tempfile

    from rag_assets import environment
    from rag_assets.cli import main
    from rag_assets.lib.store.paths import keep_scratch_in

    assert main(["report", "--by", "nothing"]) == 2  # main called with arguments: a caller, not the command line
    assert not environment._COMMAND["started"]
    before = tempfile.gettempdir()
    assert keep_scratch_in(tmp_path / "home") is None  # a test, a notebook: not a rag-assets command
    assert tempfile.gettempdir() == before and not (tmp_path / "home").exists()
