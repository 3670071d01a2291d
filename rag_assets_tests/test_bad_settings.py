"""A bad setting or model registry file stops `rag-assets` at start-up in one paragraph naming the
setting or the file (and entry), and a model key that would leave the storage folder is refused before
anything is written."""

from __future__ import annotations

import json

import pytest

from rag_assets_tests.servers import cli, one_paragraph, tiny_home_env

pytestmark = [pytest.mark.integration]


@pytest.mark.parametrize("key", ["../../evil", "/tmp/evil", "a\x00b", "x" * 300], ids=["dot-dot", "absolute", "nul", "long"])
def test_a_model_key_that_would_leave_the_storage_folder_is_refused_when_registered(tmp_path, key):
    home = tmp_path / "deep" / "er" / "home"
    registry = tmp_path / "models.json"
    registry.write_text(json.dumps([{"key": key, "loader": "wordllama", "package": "wordllama", "dimension": 256,
                                     "window": None}]), encoding="utf-8")
    env = {**tiny_home_env(home), "RAG_ASSETS_MODELS_FILE": str(registry)}
    result = cli(env, "evaluate", "--models", "wordllama", "--strategies", "boundaries")
    assert result.returncode == 1
    said = one_paragraph(result, "evaluate")
    assert f"model registry file {registry}, entry 1: the model key" in said
    written = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*") if path.is_file())
    assert [path for path in written if not path.startswith("deep/er/home/")] == ["models.json"], written
    assert not list(tmp_path.rglob("*evil*")) and not (home / "embedding_cache").exists()


@pytest.mark.parametrize(("variables", "status", "named"), [
    ({"RAG_ASSETS_EXECUTOR": "bogus"}, 2, "RAG_ASSETS_EXECUTOR='bogus'"),
    ({"RAG_ASSETS_CONNECT_TIMEOUT": "-1"}, 2, "RAG_ASSETS_CONNECT_TIMEOUT"),
    ({"RAG_ASSETS_MODELS_FILE": "{folder}/not-json.json"}, 1, "not-json.json: not JSON: line 1, column 2"),
    ({"RAG_ASSETS_MODELS_FILE": "{folder}/object.json"}, 1, "object.json: must be a JSON list"),
    ({"RAG_ASSETS_MODELS_FILE": "{folder}/unknown.json"}, 1, "unknown.json, entry 1: unknown field(s) 'colour'"),
    ({"RAG_ASSETS_MODELS_FILE": "{folder}/missing.json"}, 1, "missing.json: No such file or directory"),
    ({"RAG_ASSETS_MODELS_FILE": "{folder}/twice.json"}, 1,
     "twice.json, entry 2: the model key 'copy' is entry 1's too; each key names one model"),
], ids=["executor", "timeout", "not-json", "not-a-list", "unknown-field", "missing-file", "duplicate-key"])
def test_a_start_up_error_is_one_paragraph_naming_the_setting_or_file(tmp_path, variables, status, named):
    (tmp_path / "not-json.json").write_text("{oops", encoding="utf-8")
    (tmp_path / "object.json").write_text('{"key": "x"}', encoding="utf-8")
    (tmp_path / "unknown.json").write_text('[{"key": "x", "loader": "wordllama", "package": "wordllama", '
                                           '"dimension": 256, "window": null, "colour": "red"}]', encoding="utf-8")
    entry = {"key": "copy", "loader": "wordllama", "package": "wordllama", "dimension": 256, "window": None}
    (tmp_path / "twice.json").write_text(json.dumps([entry, entry | {"dimension": 128}]), encoding="utf-8")
    env = tiny_home_env(tmp_path / "home") | {name: value.format(folder=tmp_path) for name, value in variables.items()}
    commands = ["evaluate", "backfill --model wordllama"] + (["report", "ask what"] if status == 2 else [])
    for command in commands:  # a bad setting stops every command; the registry stops those that read it
        result = cli(env, *command.split())
        assert result.returncode == status, (command, result.stderr[-3000:])
        assert "Traceback" not in result.stdout + result.stderr, (command, result.stderr[-3000:])
        [paragraph] = result.stderr.strip().splitlines()
        assert named in paragraph, (command, paragraph)


@pytest.mark.parametrize("command", [
    "evaluate --top-k 0", "evaluate --top-k -5", "evaluate --bm25-b 5", "evaluate --bm25-k1 nan",
    "evaluate --bm25-k1 -1", "evaluate --bm25-stemmer klingon", "ui --port 70000", "ui --port 0",
    "needles suggest out.jsonl --max-similarity 2",
])
def test_an_option_outside_its_range_is_refused_in_one_line_before_anything_runs(tmp_path, command):
    home = tmp_path / "home"
    result = cli(tiny_home_env(home), *command.split())
    assert result.returncode == 2, result.stderr[-3000:]
    [line] = result.stderr.strip().splitlines()
    option, value = command.split()[-2:]
    assert f"argument {option}:" in line and value in line, line
    assert not home.exists() and not (tmp_path / "out.jsonl").exists()  # nothing ran


@pytest.mark.parametrize(("variable", "value"), [("RAG_ASSETS_TOP_K", "0"), ("RAG_ASSETS_BM25_K1", "nan"),
                                                 ("RAG_ASSETS_BM25_B", "1.5"), ("RAG_ASSETS_BM25_STEMMER", "klingon"),
                                                 ("RAG_ASSETS_SLOT_WAIT", "inf")])
def test_a_setting_outside_its_range_is_refused_in_one_line_by_every_command(tmp_path, variable, value):
    home = tmp_path / "home"
    for command in ("evaluate", "report", "ask what"):
        result = cli(tiny_home_env(home) | {variable: value}, *command.split())
        assert result.returncode == 2, (command, result.stderr[-3000:])
        [line] = result.stderr.strip().splitlines()
        assert f"{variable}={value!r}" in line, line
    assert not home.exists()


def test_a_dagster_run_config_outside_a_settings_range_is_refused_by_the_resource():
    from pydantic import ValidationError

    from rag_assets.resources import RagSettings

    for bad in ({"top_k": 0}, {"external_deadline_seconds": float("inf")}):
        with pytest.raises(ValidationError):
            RagSettings(**bad)
