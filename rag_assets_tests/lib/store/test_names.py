"""Names that become paths are checked when registered, and a path built from them stays inside its root."""

from __future__ import annotations

import json

import pytest

from rag_assets.lib.embed.models import BUILT_IN, models_from_file
from rag_assets.lib.embed.spec import ModelUnavailableError
from rag_assets.lib.ingest.chunking import STRATEGIES
from rag_assets.lib.retrieve.engine import RETRIEVERS
from rag_assets.lib.store.names import UnsafeName, check_name, inside, name_problem

BAD = ["..", "../../evil", "/etc/passwd", "a/b", "a\\b", "a\x00b", "x" * 65, "", "a__b", ".hidden", "trailing-",
       "two..dots", "a b", "é", "a|b", "a,b", "a=b", 7, None]


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "bge-small-en-v1.5", "wordllama", "a", "x" * 64, "my_model"])
def test_ordinary_names_pass(name):
    assert name_problem(name) is None
    assert check_name(name, "the model key") == name


@pytest.mark.parametrize("name", BAD, ids=repr)
def test_names_that_could_leave_the_folder_or_confuse_a_file_name_are_refused(name):
    assert name_problem(name)
    with pytest.raises(UnsafeName, match="the model key"):
        check_name(name, "the model key")


def test_every_built_in_name_passes_the_rule():
    for name in [*BUILT_IN, *STRATEGIES, *RETRIEVERS]:
        assert name_problem(name) is None, name


@pytest.mark.parametrize("part", ["..", "../x", "/abs", "a\x00b", "", ".", "a/../../b"])
def test_inside_refuses_a_part_that_leads_out(tmp_path, part):
    with pytest.raises(UnsafeName):
        inside(tmp_path, "cache", part)


def test_inside_refuses_a_link_that_leads_out(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "link").symlink_to(tmp_path)
    with pytest.raises(UnsafeName, match="resolves outside"):
        inside(tmp_path / "root", "link", "x")
    assert inside(tmp_path / "root", "cache", "x") == tmp_path / "root" / "cache" / "x"


ENTRY = {"key": "mine", "loader": "wordllama", "package": "wordllama", "dimension": 256, "window": None}


@pytest.mark.parametrize(("content", "said"), [
    ('{"key": 1', "not JSON: line 1, column 10"),
    (json.dumps(ENTRY), "must be a JSON list of objects"),
    (json.dumps(["mine"]), "entry 1: is a JSON str"),
    (json.dumps([ENTRY, {**ENTRY, "colour": "red"}]), "entry 2: unknown field(s) 'colour'"),
    (json.dumps([{"key": "mine"}]), "missing field(s) 'loader', 'package', 'dimension', 'window'"),
    (json.dumps([{**ENTRY, "key": "../../evil"}]), "entry 1: the model key '../../evil'"),
    (json.dumps([{**ENTRY, "key": "a" * 300}]), "is 300 characters long"),
    (json.dumps([{**ENTRY, "dimension": "256"}]), "field 'dimension' is '256'"),
    (json.dumps([{**ENTRY, "dimension": True}]), "field 'dimension' is True"),
    (json.dumps([{**ENTRY, "window": 0}]), "must be positive"),
    (json.dumps([{**ENTRY, "loader": "magic"}]), "unknown loader 'magic'"),
], ids=["not-json", "not-a-list", "not-an-object", "unknown-field", "missing-fields", "dot-dot", "long", "text-dim",
        "bool-dim", "zero-window", "loader"])
def test_a_faulty_registry_file_is_named_with_its_entry_and_field(tmp_path, content, said):
    path = tmp_path / "models.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ModelUnavailableError) as raised:
        models_from_file(path)
    assert str(raised.value).startswith(f"model registry file {path}")
    assert said in str(raised.value)


def test_a_good_registry_file_reads(tmp_path):
    path = tmp_path / "models.json"
    path.write_text(json.dumps([ENTRY]), encoding="utf-8")
    assert models_from_file(path)["mine"].dimension == 256
