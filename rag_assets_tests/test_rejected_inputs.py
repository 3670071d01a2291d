"""Inputs that are refused: a corpus where every document fails extraction, vectors or stamps that a
blocking check would reject, evaluation-set lines that are too long. Each is refused naming what is
wrong (the line number, for evaluation sets), and the good stored result stays in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets_tests.servers import WORDLLAMA, cli, one_paragraph, tiny_home_env

pytestmark = [pytest.mark.integration]


def stored_bytes(home: Path, asset: str) -> dict[str, bytes]:
    root = home / "parquet" / asset
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("data.parquet"))}


def test_a_refused_corpus_never_replaces_the_snapshot_of_the_good_one(tmp_path):
    from dagster import AssetKey, DagsterInstance

    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    before = {asset: stored_bytes(home, asset) for asset in ("corpus_snapshot", "extracted_text", "chunks")}
    broken = tmp_path / "broken-corpus"
    broken.mkdir()
    (broken / "a.pdf").write_bytes(b"\x00\x01\x02 not a pdf")
    (broken / "b.html").write_bytes(b"\xff\xfe\x00\x00binary")
    result = cli(env, "evaluate", *WORDLLAMA, "--corpus", str(broken))
    assert result.returncode == 1
    said = one_paragraph(result, "evaluate")
    assert "every one of the 2 documents" in said and "a.pdf: corrupt PDF" in said, said
    assert {asset: stored_bytes(home, asset) for asset in before} == before
    with DagsterInstance.from_config(str(home / "dagster")) as instance:  # Dagster's own record agrees
        latest = instance.get_latest_materialization_event(AssetKey("corpus_snapshot")).asset_materialization
        assert str(broken) not in str(latest.metadata["corpus_dir"].value)


class _NotUnitLength:
    """Claims unit vectors and returns vectors twice as long (a broken model or pooling change)."""

    def __init__(self, key: str) -> None:
        from rag_assets_tests.fakes import HashingEmbedder

        self.inner = HashingEmbedder(key)
        self.revision = "hashing-2"

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed(self, texts):
        return self.inner.embed(texts) * 2


def test_what_a_blocking_check_would_reject_never_replaces_the_last_good_partition(tmp_path):
    from dagster import DagsterInstance

    from rag_assets.resources import RagSettings
    from rag_assets.runner.evaluation import materialize_all
    from rag_assets_tests.conftest import FIXTURES
    from rag_assets_tests.fakes import FakeEmbeddingModels

    class LongVectors(FakeEmbeddingModels):
        def get(self, key):
            return _NotUnitLength(key)

        def installed_revision(self, key):
            return "hashing-2"

    class WeightsChangedUnderfoot(FakeEmbeddingModels):  # the index was built with other weights than installed
        def installed_revision(self, key):
            return "hashing-9"

    home = tmp_path / "home"
    settings = RagSettings(home=str(home), corpus_dir=str(FIXTURES / "tiny_corpus"),
                           eval_set=str(FIXTURES / "tiny_needles.jsonl"),
                           out_of_domain=str(FIXTURES / "tiny_out_of_domain.jsonl"))
    run = dict(settings=settings, instance=DagsterInstance.ephemeral(), model_keys=["all-MiniLM-L6-v2"],
               strategies=["boundaries"], progress=lambda _: None)
    materialize_all(models=FakeEmbeddingModels(), **run)
    good = {asset: stored_bytes(home, asset) for asset in ("embeddings", "retrieval_runs")}
    with pytest.raises(Exception, match="embeddings not written: vectors_are_unit_length would fail: .*norm deviation"):
        materialize_all(models=LongVectors(), rebuild=True, **run)
    assert stored_bytes(home, "embeddings") == good["embeddings"]
    with pytest.raises(Exception, match="retrieval_runs not written: retrieval_stamps_agree would fail: .*hashing-9"):
        materialize_all(models=WeightsChangedUnderfoot(), rebuild=True, **run)
    assert stored_bytes(home, "retrieval_runs") == good["retrieval_runs"]


def test_oversized_evaluation_lines_are_refused_by_line_number_without_reading_them_whole(tmp_path):
    import json

    from rag_assets_tests.conftest import FIXTURES

    home = tmp_path / "home"
    needles = (FIXTURES / "tiny_needles.jsonl").read_text().splitlines()
    cases = {
        "a 50 MB line": (needles[0], needles[1], '{"id": "huge", "questions": {"plain": "' + "x" * 50_000_000 + '"}}'),
        "a long question": (needles[0], json.dumps(json.loads(needles[1]) | {"questions": {"plain": "q" * 8_001}})),
        "a long needle": (json.dumps(json.loads(needles[0]) | {"needle": "n" * 2_001}),),
    }
    expected = {"a 50 MB line": ":3: the line is longer than 262,144 characters",
                "a long question": ":2: the 'plain' question is 8,001 characters long; at most 8,000",
                "a long needle": ":1: the needle is 2,001 characters long; at most 2,000"}
    for case, lines in cases.items():
        path = tmp_path / f"{case.replace(' ', '-')}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        result = cli(tiny_home_env(home), "evaluate", *WORDLLAMA, "--eval-set", str(path))
        assert result.returncode == 1, (case, result.stderr[-2000:])
        said = one_paragraph(result, "evaluate")
        assert f"{path}{expected[case]}" in said, (case, said[:1000])
