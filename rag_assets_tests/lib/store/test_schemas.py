import pyarrow as pa
import pytest

from rag_assets.lib.store.schemas import (
    CHUNK_QUALITY,
    SchemaError,
    check_table,
    embeddings_schema,
    table_from_rows,
)

ROW = {"strategy": "blind", "chunks": 3, "mean_characters": 10.0, "max_characters": 12, "mean_content_tokens": 3.0,
       "max_content_tokens": 4, "needles": 1,
       "answers_destroyed": 0, "destroyed_needles": [], "unlocated_chunks": 0, "unlocated": []}


def test_rows_become_a_table_of_exactly_the_declared_schema():
    table = table_from_rows(CHUNK_QUALITY, [ROW], "chunk_quality")
    assert table.schema == CHUNK_QUALITY
    check_table("chunk_quality", table)
    # a column that is all null in one partition keeps its declared type
    assert table_from_rows(CHUNK_QUALITY, [ROW | {"destroyed_needles": None}], "x").schema == CHUNK_QUALITY


def test_a_row_with_a_column_too_many_or_too_few_is_refused_naming_it():
    with pytest.raises(SchemaError, match="chunk_quality: row 1 does not match the schema; extra columns oops"):
        table_from_rows(CHUNK_QUALITY, [ROW, ROW | {"oops": 1}], "chunk_quality")
    with pytest.raises(SchemaError, match="missing columns needles"):
        table_from_rows(CHUNK_QUALITY, [{k: v for k, v in ROW.items() if k != "needles"}], "chunk_quality")


def test_the_writer_refuses_another_type_or_order_and_accepts_any_vector_size():
    wrong = table_from_rows(CHUNK_QUALITY, [ROW], "chunk_quality").set_column(1, "chunks", pa.array([3.0]))
    with pytest.raises(SchemaError, match="chunk_quality: column chunks is double, declared int64"):
        check_table("chunk_quality", wrong)
    with pytest.raises(SchemaError, match="columns .* differ from the declared"):
        check_table("chunk_quality", table_from_rows(CHUNK_QUALITY, [ROW], "x").select(["chunks", "strategy"]))
    with pytest.raises(SchemaError, match="no schema is declared for it"):
        check_table("nonexistent", wrong)
    for dimension in (256, 384):
        check_table("embeddings", embeddings_schema(dimension).empty_table())
