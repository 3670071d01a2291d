"""The helpers the assets share: a Markdown table the UI keeps behind its link, table previews and content
versions."""

import pyarrow as pa

from rag_assets.asset_support import INLINE_MARKDOWN_LIMIT, markdown_table, preview_table, table_version

TABLE = "| model | chunks |\n|---|---|\n| wordllama | 7 |\n"


def test_a_short_markdown_table_is_long_enough_to_stay_behind_the_link_and_renders_the_same():
    value = markdown_table(TABLE)
    assert len(value.value) >= INLINE_MARKDOWN_LIMIT  # Dagster's UI shows shorter Markdown inline
    assert value.value.rstrip("\n") == TABLE.rstrip("\n")  # only trailing newlines added: Markdown renders none
    assert set(value.value[len(TABLE.rstrip("\n")):]) == {"\n"}


def test_a_long_markdown_table_is_kept_as_it_is_with_one_closing_newline():
    long = "| a |\n|---|\n" + "".join(f"| row {i} |\n" for i in range(200))
    assert len(long) > INLINE_MARKDOWN_LIMIT
    assert markdown_table(long).value == long
    assert markdown_table(long + "\n\n\n").value == long


def test_a_preview_is_typed_from_its_first_row_and_strings_everything_else():
    preview = preview_table([{"id": "q1", "rank": 3, "score": 0.5, "hit": True, "path": ["a", "b"]}])
    assert [(c.name, c.type) for c in preview.value.schema.columns] == [
        ("id", "string"), ("rank", "int"), ("score", "float"), ("hit", "bool"), ("path", "string")]
    assert preview.value.records[0].data == {"id": "q1", "rank": 3, "score": 0.5, "hit": True, "path": "['a', 'b']"}


def test_a_table_version_follows_its_rows_and_schema_only():
    one = pa.table({"a": [1, 2]})
    assert table_version(one) == table_version(pa.table({"a": [1, 2]}))
    assert table_version(one) != table_version(pa.table({"a": [2, 1]}))
    assert table_version(one) != table_version(pa.table({"b": [1, 2]}))
    assert table_version(pa.concat_tables([pa.table({"a": [1]}), pa.table({"a": [2]})])) == table_version(one)
