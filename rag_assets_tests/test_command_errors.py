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
