import duckdb
import pyarrow as pa

from rag_assets.lib.embed.partition import token_stats
from rag_assets.lib.evaluate.chunk_quality import answers_destroyed
from rag_assets.lib.evaluate.measures import write_chunk_stats
from rag_assets.lib.evaluate.tables import format_chunk_stats
from rag_assets.lib.ingest.chunking import character_stats


def test_character_stats():
    # sizes 2, 4, 6: mean 4, max 6
    assert character_stats(["ab", "abcd", "abcdef"]) == {"chunks": 3, "mean_characters": 4.0, "max_characters": 6}
    assert character_stats([]) == {"chunks": 0, "mean_characters": 0.0, "max_characters": 0}


def test_answers_destroyed_lists_needles_no_chunk_holds():
    assert answers_destroyed({"n2": set(), "n1": {"c"}, "n0": set()}) == ["n0", "n2"]


def test_token_stats_counts_truncation_against_the_window():
    # window 10 with 2 special tokens: 8 content tokens fit, 9 do not
    stats = token_stats(tokens=[8, 9, 3], header_tokens=[2, 2, 0], special_tokens=2, window=10)
    assert stats == {"tokens_embedded": 20, "header_tokens": 4, "header_token_share": 0.2,
                     "truncated_chunks": 1, "window": 10}
    # a model without a window (static word vectors) truncates nothing
    assert token_stats([8, 900], [0, 0], special_tokens=0, window=None)["truncated_chunks"] == 0


def test_chunk_stats_table_per_model_and_strategy():
    tokens = pa.Table.from_pylist([
        {"model": "m", "strategy": "e", "tokens": 8, "header_tokens": 2, "truncated": False},
        {"model": "m", "strategy": "e", "tokens": 12, "header_tokens": 3, "truncated": True},
        {"model": "m", "strategy": "a", "tokens": 10, "header_tokens": 0, "truncated": False},
        {"model": "unmeasured", "strategy": "a", "tokens": 10, "header_tokens": 0, "truncated": False},
    ])
    quality = pa.Table.from_pylist([
        {"strategy": "a", "chunks": 1, "mean_characters": 40.0, "max_characters": 40, "mean_content_tokens": 9.0,
         "max_content_tokens": 9, "needles": 2,
         "answers_destroyed": 1, "destroyed_needles": ["n1"]},
        {"strategy": "e", "chunks": 2, "mean_characters": 30.0, "max_characters": 35, "mean_content_tokens": 7.5,
         "max_content_tokens": 8, "needles": 2,
         "answers_destroyed": 0, "destroyed_needles": []},
    ])
    connection = duckdb.connect()
    rates = pa.table({"model": ["m"], "tokens_per_second": [4.0]})
    write_chunk_stats(connection, tokens, quality, rates)
    rows = connection.sql("SELECT * FROM chunk_stats").to_arrow_table()
    by_strategy = {row["strategy"]: row for row in rows.to_pylist() if row["model"] == "m"}
    # e: 20 tokens of which 5 header (25 %), one chunk truncated
    assert (by_strategy["e"]["tokens_embedded"], by_strategy["e"]["header_tokens"]) == (20, 5)
    assert by_strategy["e"]["header_token_share"] == 0.25 and by_strategy["e"]["truncated_chunks"] == 1
    assert by_strategy["a"]["destroyed_needles"] == ["n1"]
    table = format_chunk_stats(rows)
    # embedding time: the tokens embedded at the model's measured rate (20 tokens at 4 a second: 5 s)
    assert by_strategy["e"]["embedding_seconds"] == 5.0 and by_strategy["a"]["embedding_seconds"] == 2.5
    assert "| m | a | 1 | 40 | 40 | 9 | 9 | 10 | 0 | 0.0 % | 2.5 s at 4 tokens/s | 0 | 1 of 2 (n1) |" in table
    assert "| m | e | 2 | 30 | 35 | 8 | 8 | 20 | 5 | 25.0 % | 5.0 s at 4 tokens/s | 1 | 0 of 2 |" in table
    assert "| unmeasured | a | 1 | 40 | 40 | 9 | 9 | 10 | 0 | 0.0 % | not measured | 0 | 1 of 2 (n1) |" in table
