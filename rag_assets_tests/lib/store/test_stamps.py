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
    assert "pipeline_version differs between files: 0, 1" in problems
    assert "snapshot_id differs between files: s1, s2" in problems
    assert "x: not in the model registry" in problems
    assert "x x b: pipeline version 0, current is 1" in problems
    assert "x x b: snapshot_id s2, current is s1" in problems
