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
    assert not [path for path in (home / "tmp").iterdir()]  # each command removed its own at exit
    assert not os.environ.get("TMPDIR", "").startswith(str(home))  # this process was not changed


ONNX_SESSION = """
import os, pathlib
from rag_assets.environment import started_as_command
from rag_assets.lib.store.paths import keep_scratch_in
if {as_command}:
    started_as_command()
keep_scratch_in(pathlib.Path({home!r}))
import onnxruntime  # onnxruntime finds its cache folder when imported
from onnx import TensorProto, helper
value = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity", [value],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
onnxruntime.InferenceSession(model.SerializeToString())
print(os.environ.get("XDG_CACHE_HOME", ""))
"""


def test_onnxruntimes_device_id_and_database_go_where_the_users_cache_was_now_inside_the_storage_folder(tmp_path):
    # whether onnxruntime writes its telemetry files depends on the machine (its container checks: CI wrote none);
    # so the same session runs twice, as a process that is not a rag-assets command and as one that is, and what
    # it wrote under the user's ~/.cache the first time it must write under caches/xdg the second time
    def session(as_command: bool) -> tuple[Path, Path, Path, str]:
        home, user, system_tmp = (tmp_path / str(as_command) / name for name in ("home", "user", "system-tmp"))
        user.mkdir(parents=True)
        system_tmp.mkdir()
        env = {name: value for name, value in os.environ.items() if name not in ("XDG_CACHE_HOME", "TMPDIR")}
        run = subprocess.run([sys.executable, "-c", ONNX_SESSION.format(home=str(home), as_command=as_command)],
                             env=env | {"HOME": str(user), "TMPDIR": str(system_tmp)}, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-3000:]
        return home, user, system_tmp, run.stdout.strip()

    _, user_before, _, variable_before = session(as_command=False)
    home, user, system_tmp, variable = session(as_command=True)
    assert variable_before == "" and variable == str(home / "caches" / "xdg")
    assert written(user) == [] and written(system_tmp) == []
    in_the_users_cache = [name for name in written(user_before) if name.startswith(".cache/")]
    assert written(home / "caches" / "xdg") == [name.removeprefix(".cache/") for name in in_the_users_cache]
    print("onnxruntime wrote:", in_the_users_cache)


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


def test_ask_on_a_read_only_storage_folder_writes_nothing_anywhere(tmp_path):
    """A storage folder on a read-only mount: `ask` still answers, and writes neither into it nor into the user's
    folder or the temporary folder (tiktoken reads its installed rank file instead of caching a copy)."""
    from rag_assets_tests.servers import QUESTION, WORDLLAMA

    home, user, system_tmp, mounted = tmp_path / "home", tmp_path / "user", tmp_path / "system-tmp", tmp_path / "ro"
    for folder in (user, system_tmp, mounted):
        folder.mkdir()
    assert cli(tiny_home_env(home), "evaluate", *WORDLLAMA).returncode == 0
    if os.geteuid() != 0:
        pytest.fail("a read-only storage folder is a read-only bind mount, which only root can make: run the tests "
                    "as root (CI does)")
    subprocess.run(["mount", "--bind", str(home), str(mounted)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mounted)], check=True)
        before = written(mounted)
        env = {name: value for name, value in tiny_home_env(mounted).items()
               if name not in ("XDG_CACHE_HOME", "MPLCONFIGDIR", "TIKTOKEN_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR",
                               "TRITON_CACHE_DIR")} | {"HOME": str(user), "TMPDIR": str(system_tmp)}
        asked = cli(env, "ask", QUESTION, "--model", "wordllama", "--strategy", "boundaries", "--retriever", "dense",
                    "--cut", "2")
        assert asked.returncode == 0, asked.stderr[-3000:]
        assert "Traceback" not in asked.stderr and "[1]" in asked.stdout, (asked.stdout[-2000:], asked.stderr[-2000:])
        assert written(system_tmp) == [] and written(user) == [], (written(system_tmp), written(user))
        assert written(mounted) == before
    finally:
        subprocess.run(["umount", str(mounted)], check=True)
