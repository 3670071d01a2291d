"""The strategies registry: a strategies file's entries, sweeps expanded and named, every fault one line naming
the file, the entry and the key."""

from __future__ import annotations

import json

import pytest

from rag_assets.lib.ingest.chunking import STRATEGIES, Strategy
from rag_assets.lib.ingest.strategies import StrategyFileError, registry, strategies_from_file


def write(tmp_path, entries, name="strategies.json"):
    path = tmp_path / name
    path.write_text(json.dumps(entries) if name.endswith(".json") else entries, encoding="utf-8")
    return path


def test_a_sweep_expands_to_named_members_of_one_family(tmp_path):
    path = write(tmp_path, [{"name": "bh", "header": True, "unit": "tokens", "size": [128, 256, 512, 1024],
                             "overlap": [0, 0.25]}])
    strategies = strategies_from_file(path)
    assert list(strategies) == [f"bh-{size}t-o{overlap}" for size in (128, 256, 512, 1024)
                                for overlap in (0, size // 4)]
    member = strategies["bh-256t-o64"]
    assert (member.target, member.overlap, member.unit, member.header, member.boundaries, member.family) == (
        256, 64, "tokens", True, True, "bh")
    assert member.line == "bh" and Strategy("lone").line == "lone"


def test_one_size_keeps_the_entrys_name_and_toml_reads_as_json_does(tmp_path):
    toml = write(tmp_path, '[[strategy]]\nname = "lc"\nkind = "langchain"\nsplitter = "RecursiveCharacterTextSplitter"'
                           '\nunit = "characters"\nsize = 400\noverlap = 40\noptions = { separators = ["\\n\\n", " "] }\n',
                 "s.toml")
    [strategy] = strategies_from_file(toml).values()
    assert (strategy.name, strategy.kind, strategy.target, strategy.overlap, strategy.boundaries) == (
        "lc", "langchain", 400, 40, False)
    assert dict(strategy.options) == {"separators": '["\\n\\n", " "]'}
    as_json = write(tmp_path, [{"name": "lc", "kind": "langchain", "splitter": "RecursiveCharacterTextSplitter",
                                "unit": "characters", "size": 400, "overlap": 40,
                                "options": {"separators": ["\n\n", " "]}}])
    assert strategies_from_file(as_json) == strategies_from_file(toml)


def test_the_registry_is_the_built_in_strategies_then_the_files(tmp_path):
    assert registry("") == STRATEGIES
    path = write(tmp_path, [{"name": "mine", "unit": "characters", "size": 300}])
    assert list(registry(path)) == [*STRATEGIES, "mine"]


@pytest.mark.parametrize("entry, said", [
    ({"name": "x/y", "unit": "tokens", "size": 10}, "entry 1 ('x/y'): key 'name' contains a character"),
    ({"unit": "tokens", "size": 10}, "entry 1: key 'name' is missing"),
    ({"name": "blind", "unit": "tokens", "size": 10}, "key 'name': 'blind' is a built-in strategy's name"),
    ({"name": "a", "kind": "spacy", "unit": "tokens", "size": 10}, "key 'kind': 'spacy' is not a kind"),
    ({"name": "a", "unit": "tokens", "size": 0}, "key 'size': 0 is not a whole number from 1 to 4096"),
    ({"name": "a", "unit": "tokens", "size": 4097}, "key 'size': 4097 is not a whole number from 1 to 4096"),
    ({"name": "a", "unit": "characters", "size": 16385}, "from 1 to 16384"),
    ({"name": "a", "unit": "tokens", "size": 1.5}, "key 'size': 1.5 is not a whole number"),
    ({"name": "a", "size": 100}, "key 'unit': a size is in 'characters' or 'tokens', said explicitly"),
    ({"name": "a", "unit": "tokens", "size": 100, "overlap": 100}, "key 'overlap': 100 is not below the size 100"),
    ({"name": "a", "unit": "tokens", "size": 100, "overlap": 1.0}, "the fraction 1.0 is not from 0 up to"),
    ({"name": "a", "unit": "tokens", "size": 100, "overlap": -1}, "key 'overlap': -1 is not below the size"),
    ({"name": "a", "unit": "tokens", "size": 100, "colour": "red"}, "unknown key(s) 'colour'"),
    ({"name": "a", "kind": "langchain", "unit": "tokens", "size": 100}, "key 'splitter': a langchain strategy names"),
    ({"name": "a", "kind": "langchain", "splitter": "X", "boundaries": True}, "key 'boundaries' is ours only"),
    ({"name": "a", "unit": "tokens", "size": 100, "header": "yes"}, "key 'header': true or false, not 'yes'"),
    ({"name": "a", "unit": "tokens", "size": [100, 100]}, "key 'size': [100, 100] lists a value twice"),
    ({"name": "a" * 60, "unit": "tokens", "size": [100, 200]}, "the sweep's name"),
    ({"name": "a"}, "key 'size' is missing"),
    ({"name": "a", "unit": "tokens", "size": 100, "model": "bge-small"}, "key 'model' is for a splitter that embeds"),
    ({"name": "a", "kind": "chonkie", "splitter": "SemanticChunker", "model": 3}, "key 'model': a registered model"),
    ("blind", "entry 1: is a str, not an object"),
])
def test_a_bad_entry_is_one_line_naming_the_file_the_entry_and_the_key(tmp_path, entry, said):
    path = write(tmp_path, [entry])
    with pytest.raises(StrategyFileError) as caught:
        strategies_from_file(path)
    message = str(caught.value)
    assert said in message and message.startswith(f"strategies file {path}, entry 1") and "\n" not in message


def test_a_name_given_twice_names_both_entries(tmp_path):
    path = write(tmp_path, [{"name": "a-100t-o0", "unit": "tokens", "size": 100},
                            {"name": "a", "unit": "tokens", "size": [100, 200]}])
    with pytest.raises(StrategyFileError, match=r"entry 2 \('a'\): key 'name': 'a-100t-o0' is entry 1's too"):
        strategies_from_file(path)


@pytest.mark.parametrize("text, said", [("[1,", "not JSON: line 1"), ('{"name": "a"}', "must be a list of entries")])
def test_a_file_that_is_not_a_list_of_entries_is_named(tmp_path, text, said):
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(StrategyFileError, match=said):
        strategies_from_file(path)


def test_the_size_limit_follows_the_largest_model_window(tmp_path):
    path = write(tmp_path, [{"name": "a", "unit": "tokens", "size": 8192}])
    assert strategies_from_file(path, largest_window=1024)["a"].target == 8192
    with pytest.raises(StrategyFileError, match="from 1 to 4096"):
        strategies_from_file(path, largest_window=512)


def test_a_semantic_splitter_gets_the_default_model_unless_it_names_one(tmp_path):
    path = write(tmp_path, [{"name": "sem", "kind": "llamaindex", "splitter": "SemanticSplitterNodeParser"},
                            {"name": "chk", "kind": "chonkie", "splitter": "SemanticChunker", "unit": "tokens",
                             "size": 256, "model": "bge-small"},
                            {"name": "rec", "kind": "chonkie", "splitter": "RecursiveChunker"}])
    found = strategies_from_file(path)
    assert (found["sem"].model, found["chk"].model, found["rec"].model) == ("all-MiniLM-L6-v2", "bge-small", "")
