import pytest

from rag_assets.lib.store.stamps import PIPELINE_VERSION, stamp_problems


def _stamp(**overrides):
    return {"model": "m", "revision": "r1", "dimension": 384, "normalized": True, "pipeline_version": PIPELINE_VERSION,
            "extractor_version": "1", "snapshot_id": "s1", "strategy": "a"} | overrides


def test_one_consistent_build_has_no_problem():
    assert stamp_problems([_stamp(), _stamp(strategy="b")], {"m": "r1"}, expected={"snapshot_id": "s1"}) == []


def test_a_half_migrated_index_names_what_disagrees():
    rows = [_stamp(), _stamp(strategy="b", revision="r2")]
    assert stamp_problems(rows, {"m": "r2"}) == [
        "m: revision differs between files: r1, r2",
        "m: built with weights r1 but the installed weights are r2 (strategies a): backfill this model",
    ]


def test_mixed_snapshots_pipelines_and_unknown_models():
    rows = [_stamp(), _stamp(model="x", strategy="b", snapshot_id="s2", pipeline_version="0")]
    problems = stamp_problems(rows, {"m": "r1"}, expected={"snapshot_id": "s1"})
    assert f"pipeline_version differs between files: 0, {PIPELINE_VERSION}" in problems
    assert "snapshot_id differs between files: s1, s2" in problems
    assert "x: not in the model registry" in problems
    assert f"x x b: pipeline version 0, current is {PIPELINE_VERSION}" in problems
    assert "x x b: snapshot_id s2, current is s1" in problems


@pytest.mark.parametrize("field, other", [
    ("revision", "r2"), ("dimension", 256), ("normalized", False), ("pipeline_version", "0"),
    ("extractor_version", "2"), ("snapshot_id", "s2"),
])
def test_every_field_of_the_stamp_is_checked(field, other):
    """One strategy's files differ from the other's in one field: named, whatever the field."""
    rows = [_stamp(), _stamp(strategy="b", **{field: other})]
    problems = stamp_problems(rows, {"m": "r1"})
    scope = "m: " if field in ("revision", "dimension", "normalized") else ""
    assert f"{scope}{field} differs between files: " in "\n".join(problems), problems


def test_distinct_stamps_and_values_that_are_not_all_text():
    from rag_assets.lib.store.stamps import distinct_stamps

    assert sorted(distinct_stamps([_stamp(), _stamp(), _stamp(strategy="b")]), key=lambda s: s["strategy"]) == [
        _stamp(), _stamp(strategy="b")]
    problems = stamp_problems([_stamp(snapshot_id=None), _stamp(strategy="b", snapshot_id="s1")], {"m": "r1"})
    assert problems == ["snapshot_id differs between files: None, s1"]  # None sorted as text, not an error


def test_every_model_is_checked_after_one_that_is_not_registered():
    rows = [_stamp(model="gone"), _stamp(model="m", revision="r1", strategy="a"),
            _stamp(model="m", revision="r0", strategy="b"), _stamp(model="m", revision="r0", strategy="c")]
    problems = stamp_problems(rows, {"m": "r2"})
    assert "gone: not in the model registry" in problems
    assert ("m: built with weights r0, r1 but the installed weights are r2 (strategies a, b, c): backfill this model"
            in problems)


def test_an_external_retriever_is_skipped_and_the_models_after_it_are_still_checked():
    from rag_assets.lib.store.stamps import EXTERNAL_MODEL

    # an external retriever's revision is its index version, one per retriever: never a problem; "m" sorts after it
    rows = [_stamp(model=EXTERNAL_MODEL, revision="v1", strategy="prod"),
            _stamp(model=EXTERNAL_MODEL, revision="v7", strategy="staging"), _stamp(model="m", revision="r0")]
    assert stamp_problems(rows, {"m": "r1"}) == [
        "m: built with weights r0 but the installed weights are r1 (strategies a): backfill this model"]


def test_the_stamps_of_a_table_are_its_distinct_stamp_fields():
    import pyarrow as pa

    from rag_assets.lib.store.schemas import STAMP_FIELDS
    from rag_assets.lib.store.stamps import stamps_of

    rows = [_stamp() | {"chunk_id": "c1"}, _stamp() | {"chunk_id": "c2"}, _stamp(strategy="b") | {"chunk_id": "c3"}]
    found = stamps_of(pa.Table.from_pylist(rows))
    assert sorted(found, key=lambda s: s["strategy"]) == [
        {field: _stamp()[field] for field in STAMP_FIELDS}, {field: _stamp(strategy="b")[field] for field in STAMP_FIELDS}]
