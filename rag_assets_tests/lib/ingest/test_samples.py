"""The preview of a strategy's chunks: spread evenly over them, first and last included, each once."""

from rag_assets.lib.ingest.samples import sample_chunks


def _rows(count: int) -> list[dict]:
    return [{"chunk_id": f"c{i}", "section": None if i == 0 else f"S{i}", "start": 10 * i, "end": 10 * i + 9,
             "content": "word " * 50 if i == 5 else f"chunk {i}"} for i in range(count)]


def test_six_chunks_spread_from_the_first_to_the_last():
    picked = sample_chunks(_rows(11))
    assert [row["chunk_id"] for row in picked] == ["c0", "c2", "c4", "c6", "c8", "c10"]
    assert picked[0] == {"chunk_id": "c0", "section": "", "start": 0, "end": 9, "content": "chunk 0"}
    assert [row["chunk_id"] for row in sample_chunks(_rows(21), count=3)] == ["c0", "c10", "c20"]


def test_fewer_chunks_than_asked_each_once_and_an_excerpt_of_a_long_one():
    assert [row["chunk_id"] for row in sample_chunks(_rows(4))] == ["c0", "c1", "c2", "c3"]
    assert [row["chunk_id"] for row in sample_chunks(_rows(2), count=1)] == ["c0"]
    assert sample_chunks([]) == []
    long = sample_chunks(_rows(6))[-1]
    assert long["chunk_id"] == "c5" and long["content"].endswith("…") and len(long["content"]) == 160
