"""A damaged file under the storage folder is named alone: a damaged page of Dagster's run index is the one
file to set aside (the run history's other files are kept), and a truncated embedding-cache shard is
discarded with a warning on the command's output, its texts embedded again."""

from __future__ import annotations

import shutil

import pytest

from rag_assets_tests.servers import WORDLLAMA, cli, halve, one_paragraph, tiny_home_env

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    home = tmp_path_factory.mktemp("evaluated") / "home"
    assert cli(tiny_home_env(home), "evaluate", *WORDLLAMA).returncode == 0
    return home


def copy_of(evaluated, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(evaluated, home)
    return home


def test_a_damaged_page_of_the_run_index_names_that_file_and_moves_only_it(evaluated, tmp_path):
    home = copy_of(evaluated, tmp_path)
    index = home / "dagster" / "history" / "runs" / "index.db"
    data = bytearray(index.read_bytes())
    data[2 * 4096 + 100: 2 * 4096 + 400] = b"garbage!" * 37 + b"gggg"  # a table page: SQLite still opens the file
    index.write_bytes(bytes(data))
    result = cli(tiny_home_env(home), "evaluate", *WORDLLAMA, "--rebuild")
    assert result.returncode == 1
    said = one_paragraph(result, "evaluate")
    assert f"Dagster's database {index} is damaged" in said and f"mv {index} {index}.damaged" in said, said
    assert f"mv {home / 'dagster'} " not in said, said
    index.rename(index.with_name("index.db.damaged"))  # as told
    again = cli(tiny_home_env(home), "evaluate", *WORDLLAMA)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (home / "dagster" / "history" / "runs.db").exists()


def test_a_truncated_cache_shard_is_discarded_with_a_warning_and_its_texts_embedded_again(evaluated, tmp_path):
    home = copy_of(evaluated, tmp_path)
    [shard] = (home / "embedding_cache" / "wordllama").glob("*/*.parquet")
    halve(shard)
    result = cli(tiny_home_env(home), "evaluate", *WORDLLAMA, "--rebuild")
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    [warning] = [line for line in output.splitlines() if "damaged cache shard" in line]
    assert warning.startswith("rag-assets: warning: discarded a damaged cache shard") and str(shard) in warning, warning
    assert "its entries are computed again" in warning
    assert list(shard.parent.glob("*.parquet")) and not shard.exists()  # a new shard holds the texts embedded again
