"""Mistakes met at the command line each end in one paragraph that says what to do: an unknown model, a
report column that does not exist, an export folder that holds files or cannot be written, a damaged
partition met by `ask` or `export`."""

from __future__ import annotations

import pytest

from rag_assets_tests.servers import QUESTION, WORDLLAMA, cli, halve, one_paragraph, tiny_home_env

pytestmark = [pytest.mark.integration]


def test_the_smaller_defects_each_say_what_to_do(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    # backfill (and evaluate) of an unknown model is bad usage that creates nothing
    for command in (["backfill", "--model", "unknown"], ["evaluate", "--models", "unknown"]):
        result = cli(env, *command)
        assert result.returncode == 2 and "unknown model unknown" in one_paragraph(result, command[0])
        assert not home.exists()
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    # report --by with a column that does not exist is bad usage
    result = cli(env, "report", "--by", "bad")
    assert result.returncode == 2 and "choose from model" in one_paragraph(result, "report")
    # export refuses to overwrite, replaces with --force, and blames the folder it cannot write
    out = tmp_path / "exported"
    assert cli(env, "export", str(out)).returncode == 0
    written = {path.name: path.read_bytes() for path in out.iterdir()}
    (out / "wordllama__boundaries__dense.run").write_text("mine\n")
    result = cli(env, "export", str(out))
    assert result.returncode == 1
    said = one_paragraph(result, "export")
    assert "already exist" in said and "--force" in said and "nothing was written" in said
    assert (out / "wordllama__boundaries__dense.run").read_text() == "mine\n"
    assert cli(env, "export", str(out), "--force").returncode == 0
    assert {path.name: path.read_bytes() for path in out.iterdir()} == written
    result = cli(env, "export", "/sys/fs/rag-assets-export")  # /sys refuses new files and folders, even to root
    said = one_paragraph(result, "export")
    assert result.returncode == 1 and "the export folder /sys/fs/rag-assets-export must be writable" in said
    assert "RAG_ASSETS_HOME" not in said
    # a damaged partition met by ask or export names the command that rebuilds it
    halve(home / "parquet" / "embeddings" / "model=wordllama" / "strategy=boundaries" / "data.parquet")
    result = cli(env, "ask", QUESTION)
    assert result.returncode == 1
    assert "Rebuild it: rag-assets backfill --model wordllama --strategies boundaries" in one_paragraph(result, "ask")
    halve(home / "parquet" / "chunks" / "strategy=boundaries" / "data.parquet")
    result = cli(env, "export", str(tmp_path / "again"))
    assert result.returncode == 1
    assert "Rebuild it: rag-assets evaluate --rebuild --strategies boundaries" in one_paragraph(result, "export")


def test_a_damaged_dagster_run_database_is_named_with_its_fix_and_the_fix_works(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    runs = home / "dagster" / "history" / "runs.db"
    runs.write_bytes(b"not a database at all " * 200)
    result = cli(env, "evaluate", *WORDLLAMA)
    said = one_paragraph(result, "evaluate")
    assert result.returncode == 1 and f"Dagster's database {runs} is damaged (file is not a database)" in said
    assert "sqlalche.me" not in said and "[SQL:" not in said
    runs.rename(runs.with_name("runs.db.damaged"))  # the fix it names
    again = cli(env, "evaluate", *WORDLLAMA)
    assert again.returncode == 0, again.stderr[-3000:]


@pytest.fixture
def small_file_system(tmp_path):
    """A 2 MB tmpfs of its own, mounted for the test and unmounted after it (root can mount one here)."""
    import os
    import subprocess

    if os.geteuid() != 0:
        pytest.fail("a full disk is reproduced on a tmpfs, which only root can mount: run the tests as root (CI does)")
    folder = tmp_path / "small"
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2M", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def test_a_full_disk_under_the_dagster_database_is_one_line_naming_the_folder(tmp_path, small_file_system):
    home = small_file_system / "home"
    env = tiny_home_env(home)
    for attempt in range(3):  # the first fills the disk as it goes; then no byte is left, the instance's files exist
        result = cli(env, "evaluate", *WORDLLAMA)
        said = one_paragraph(result, "evaluate")
        assert result.returncode == 1 and "free space" in said.lower(), said
        assert "sqlalche.me" not in said and "[SQL:" not in said, said
        assert str(home) in said, said
        if attempt == 0:
            assert (home / "dagster" / "history" / "runs.db").exists()
            with open(small_file_system / "filler", "wb", buffering=0) as filler:  # every byte left taken
                try:
                    while True:
                        filler.write(b"\0" * 4096)
                except OSError:
                    pass


def test_a_storage_path_too_long_for_the_system_is_refused_before_anything_runs(tmp_path):
    long_path = tmp_path / "/".join(["d" * 200] * 19)
    long_name = tmp_path / ("n" * 300)
    for home, said in ((long_path, "choose a storage folder with a shorter path"),
                       (long_name, "a folder name of 300 bytes")):
        for command in ("evaluate", "report", "ask what"):
            result = cli(tiny_home_env(home), *command.split())
            assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
            [line] = result.stderr.strip().splitlines()
            assert line.startswith("rag-assets: error: RAG_ASSETS_HOME=") and said in line, line
            assert len(line) < 600
    assert not list(tmp_path.iterdir())
