"""The evaluation set's blocking checks on purpose-made broken sets, through Dagster."""

import json
import shutil

import pytest
from dagster import DagsterInstance, materialize

from rag_assets.definitions import ASSET_CHECKS, ASSETS
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
    assert all(check.passed for check in _checks(result).values()) and len(_checks(result)) == 7  # 5 + extraction's two


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
    assert any(r.startswith("twice: occurs 2 times in the corpus") for r in reasons)
    assert not any(r.startswith("head: occurs") for r in reasons)  # a heading occurs once: another reason
    assert "head: is (inside) a heading" in reasons
    assert "blank: no 'ticket' question" in reasons
    assert not any("out-of-domain" in r for r in reasons)


def test_a_needle_absent_after_a_corpus_edit_fails_and_holds_back_downstream(tmp_path, corpus):
    toaster = "Slide out the crumb tray at the bottom and empty it over a bin once a week, since old crumbs can catch fire."
    lines = [_needle("t1", "toasters.html", toaster)]
    first, _, _ = _run(tmp_path, corpus, lines)
    assert first.success
    page = corpus / "toasters.html"
    page.write_text(page.read_text().replace("once a week", "every day"))
    result, resources, instance = _run(tmp_path, corpus, lines)
    assert "t1: occurs 0 times in the corpus, must occur exactly once" in _rejection(result)
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
