"""The evaluation set's blocking checks on purpose-made broken sets, through Dagster."""

import json
import shutil
from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from rag_assets.definitions import ASSET_CHECKS, ASSETS
from rag_assets.lib.store import paths
from rag_assets.resources import ParquetIOManager, RagSettings
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration

KETTLE = "Fill the kettle halfway with equal parts white vinegar and water, boil it, and let it stand for one hour before rinsing."


def _needle(needle_id, doc_id, needle, doc="A question?", ticket="A ticket?"):
    return json.dumps({"id": needle_id, "doc_id": doc_id, "needle": needle, "questions": {"doc": doc, "ticket": ticket}})


def _run(tmp_path, corpus, lines, out_of_domain=True):
    needles = tmp_path / "needles.jsonl"
    needles.write_text("\n".join(lines) + "\n")
    ood = tmp_path / "ood.jsonl"
    ood.write_text('{"id": "o1", "query": "Who painted the Mona Lisa?", "kind": "off_topic"}\n' if out_of_domain else "")
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(corpus), eval_set=str(needles),
                           out_of_domain=str(ood))
    resources = {"settings": settings, "models": FakeEmbeddingModels(), "io_manager": ParquetIOManager(home=settings.home)}
    instance = DagsterInstance.ephemeral()
    result = materialize([*ASSETS, *ASSET_CHECKS], selection=["corpus_snapshot", "extracted_text", "eval_set"],
                         resources=resources, instance=instance, raise_on_error=False)
    return result, resources, instance


def _description(result) -> str:
    [failure] = [e for e in result.get_step_failure_events() if e.step_key == "eval_set"]
    return failure.event_specific_data.user_failure_data.description


def _checks(result):
    return {check.check_name: check for check in result.get_asset_check_evaluations()}


def _rejection(result) -> str:
    """Why the eval_set step refused the set (it is then not written, and its checks do not run): one
    problem per id, joined by "; "."""
    [failure] = [e for e in result.get_step_failure_events() if e.step_key == "eval_set"]
    data = failure.event_specific_data.user_failure_data
    assert "was rejected and not written" in data.description
    return "; ".join(data.metadata["problems"].value)


@pytest.fixture
def corpus(tmp_path, tiny_corpus):
    copy = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, copy)
    return copy


def test_a_good_set_passes_every_check(tmp_path, corpus):
    result, _, _ = _run(tmp_path, corpus, [_needle("k1", "guide/kettles.html", KETTLE)])
    assert result.success
    assert all(check.passed for check in _checks(result).values()) and len(_checks(result)) == 8  # 6 + extraction's two
    assert _checks(result)["needles_follow_the_corpus"].description == "all 1 needles kept"


def test_broken_sets_fail_their_checks_naming_each_id(tmp_path, corpus):
    lines = [
        _needle("k1", "guide/kettles.html", KETTLE),
        _needle("k1", "guide/kettles.html", "Never immerse the base of the kettle in water."),  # duplicate id
        _needle("twice", "guide/kettles.html", "the kettle"),  # "Fill the kettle", "base of the kettle"
        _needle("head", "guide/kettles.html", "Descaling"),  # a heading
        _needle("blank", "toasters.html", "A toaster browns bread by radiant heat from glowing nichrome wires.",
                ticket=" "),  # a phrasing left empty
    ]
    result, _, _ = _run(tmp_path, corpus, lines)
    assert not result.success  # refused before it was written, naming every id at fault
    reasons = _rejection(result).split("; ")
    assert "k1:doc: duplicate id" in "; ".join(reasons)
    # 2 of 5 needles no longer single a place out: more than evaluation.max_lost_needles (20 %), so it stops
    assert "not written (the last good one stays): 2 of 5 needles (40%) no longer hold" in _description(result)
    assert any(r.startswith("twice: occurs 2 times in the corpus: guide/kettles.html (2)") for r in reasons)
    assert not any(r.startswith("head: occurs") for r in reasons)  # a heading occurs once: another reason
    assert "head: is (inside) a heading of guide/kettles.html" in reasons
    assert "blank: no 'ticket' question" in reasons
    assert not any("out-of-domain" in r for r in reasons)


TOASTER = "Slide out the crumb tray at the bottom and empty it over a bin once a week, since old crumbs can catch fire."
OTHERS = [("k1", "guide/kettles.html", KETTLE),
          ("k2", "guide/kettles.html", "Never immerse the base of the kettle in water."),
          ("k3", "toasters.html", "A toaster browns bread by radiant heat from glowing nichrome wires.")]


def test_an_edited_needle_is_left_out_and_named_and_the_evaluation_goes_on(tmp_path, corpus):
    lines = [_needle("t1", "toasters.html", TOASTER)] + [_needle(*needle) for needle in OTHERS] + [
        _needle("k4", "guide/kettles.html", "Hard water leaves a white crust of limescale on the heating element.")]
    page = corpus / "toasters.html"
    page.write_text(page.read_text().replace("once a week", "every day"))  # a writer's edit of t1's sentence
    result, resources, instance = _run(tmp_path, corpus, lines)
    assert result.success, [e.message for e in result.get_step_failure_events()]
    metadata = result.asset_materializations_for_node("eval_set")[0].metadata
    assert metadata["needles_in_the_snapshot"].value == {"kept": 4, "moved": 0, "edited": 1, "removed": 0,
                                                         "ambiguous": 0}
    changed = metadata["needles_changed"].value
    assert "| t1 | edited | toasters.html |" in changed and "every day, since old crumbs" in changed
    stored = paths.read_stored(paths.partition_path(Path(resources["settings"].home), "eval_set"), "eval_set")
    asked = {row["needle_id"] for row in stored.to_pylist() if row["needle_id"]}
    assert asked == {"k1", "k2", "k3", "k4"}  # t1 is not asked until a person accepts its successor
    follow = _checks(result)["needles_follow_the_corpus"]
    assert (follow.passed, follow.severity.value) == (False, "WARN")
    assert follow.description.startswith("t1: edited (0.9") and follow.metadata["edited"].value == 1
    assert all(check.passed for name, check in _checks(result).items() if name != "needles_follow_the_corpus")
    # downstream runs on the needles that hold
    from rag_assets.partitions import add_strategy_partitions

    add_strategy_partitions(instance, ["boundaries"])
    run = materialize([*ASSETS, *ASSET_CHECKS], selection=["eval_set", "chunks", "chunk_quality"],
                      partition_key="boundaries", resources=resources, instance=instance, raise_on_error=False)
    assert run.success and run.asset_materializations_for_node("chunk_quality")


def test_more_lost_needles_than_the_share_stop_the_evaluation_and_hold_back_downstream(tmp_path, corpus):
    lines = [_needle("t1", "toasters.html", TOASTER), _needle(*OTHERS[0])]
    first, _, _ = _run(tmp_path, corpus, lines)
    assert first.success
    page = corpus / "toasters.html"
    page.write_text(page.read_text().replace("once a week", "every day"))
    result, resources, instance = _run(tmp_path, corpus, lines)
    assert _rejection(result).startswith("t1: edited (0.9")
    description = _description(result)  # 1 of 2 is 50 %, more than 20 %
    assert "1 of 2 needles (50%) no longer hold" in description and "needles repair" in description
    # downstream in the same run does not start on a broken set
    from rag_assets.partitions import add_strategy_partitions

    add_strategy_partitions(instance, ["boundaries"])
    run = materialize([*ASSETS, *ASSET_CHECKS], selection=["eval_set", "chunks", "chunk_quality"],
                      partition_key="boundaries", resources=resources, instance=instance, raise_on_error=False)
    assert not run.success
    assert run.asset_materializations_for_node("chunk_quality") == []


def test_no_out_of_domain_queries_fails_when_a_file_is_configured(tmp_path, corpus):
    result, _, _ = _run(tmp_path, corpus, [_needle("k1", "guide/kettles.html", KETTLE)], out_of_domain=False)
    assert "no out-of-domain queries" in _rejection(result)


def test_a_malformed_line_fails_the_asset_naming_file_and_line(tmp_path, corpus):
    result, _, _ = _run(tmp_path, corpus, [_needle("k1", "guide/kettles.html", KETTLE), '{"id": "k2", oops'])
    failure = result.get_step_failure_events()[0]
    assert failure.step_key == "eval_set"
    assert f"{tmp_path / 'needles.jsonl'}:2: not valid JSON" in failure.event_specific_data.error.cause.message
