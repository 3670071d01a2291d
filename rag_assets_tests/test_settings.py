"""Every setting is defined and read in one place (rag_assets/settings.py), read when needed, and a bad
value is one line naming the variable."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import rag_assets
from rag_assets import settings
from rag_assets.settings import SettingsError, current

PACKAGE = Path(rag_assets.__file__).resolve().parent


def _environment_readers(path: Path) -> list[str]:
    """``file:line`` of every use of ``os.environ`` or ``os.getenv`` in a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "unsetenv"):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
        if isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                alias.name in ("environ", "getenv") for alias in node.names):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_only_the_settings_and_environment_modules_touch_the_environment():
    owners = {PACKAGE / "settings.py", PACKAGE / "environment.py"}
    readers = [where for path in sorted(PACKAGE.rglob("*.py")) if path not in owners
               for where in _environment_readers(path)]
    assert readers == []
    assert all(_environment_readers(owner) for owner in owners)  # the rule finds what it looks for


def test_the_rule_finds_a_reader(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\nfrom os import getenv\nx = os.environ.get('A')\n")
    assert len([w for w in _environment_readers_anywhere(module)]) == 2


def _environment_readers_anywhere(path: Path) -> list[int]:
    return [node.lineno for node in ast.walk(ast.parse(path.read_text()))
            if (isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"))
            or (isinstance(node, ast.ImportFrom) and node.module == "os")]


@pytest.mark.parametrize("variable, value, said", [
    ("RAG_ASSETS_MAX_RUNS", "many", "RAG_ASSETS_MAX_RUNS='many': Input should be a valid integer, unable to parse string as an integer"),
    ("RAG_ASSETS_EXECUTOR", "bogus", "RAG_ASSETS_EXECUTOR='bogus': Input should be 'in_process', 'multiprocess' or 'k8s'"),
    ("RAG_ASSETS_TOP_K", "0", "RAG_ASSETS_TOP_K='0': Input should be greater than or equal to 1"),
    ("RAG_ASSETS_AUTOMATION", "paused", "RAG_ASSETS_AUTOMATION='paused': Input should be 'running' or 'stopped'"),
    ("RAG_ASSETS_TAGS", "tier", "RAG_ASSETS_TAGS='tier': every tag is key=value; tier is not"),
    ("RAG_ASSETS_OBJECT_STORE_OPTIONS", "[1]", "RAG_ASSETS_OBJECT_STORE_OPTIONS='[1]': must be a JSON object"),
    ("RAG_ASSETS_BM25_B", "2", "RAG_ASSETS_BM25_B='2': Input should be less than or equal to 1"),
    ("RAG_ASSETS_DECISION_MARGIN", "1", "RAG_ASSETS_DECISION_MARGIN='1': Input should be less than 1"),
    ("RAG_ASSETS_DECISION_MARGIN", "-0.1", "RAG_ASSETS_DECISION_MARGIN='-0.1': Input should be greater than or equal to 0"),
    ("RAG_ASSETS_REPORT_PORT", "0", "RAG_ASSETS_REPORT_PORT='0': Input should be greater than or equal to 1"),
    ("RAG_ASSETS_REPORT_PORT", "65536", "RAG_ASSETS_REPORT_PORT='65536': Input should be less than or equal to 65535"),
])
def test_a_bad_value_names_the_variable_the_value_and_what_it_must_be(monkeypatch, variable, value, said):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as error:
        current()
    assert str(error.value) == said


@pytest.mark.parametrize("value, said", [
    ("postgresql://rag:p@ss@[::1x]/db", "not a URL: its host or port cannot be read"),
    ("postgresql://rag:pa#ss@host/db", "not a URL: its host or port cannot be read"),
    ("postgresql://rag:12/ss@host/db", "not a URL: its host or port cannot be read"),
    ("postgresql://rag:hunter2-secret@host/db", "holds its password as written; name it as ${VARIABLE}"),
    ("ftp://host/db", "scheme 'ftp' is not one of postgresql://"),
])
def test_a_bad_publish_url_is_named_and_never_shows_its_password(monkeypatch, value, said, tmp_path):
    monkeypatch.setenv("RAG_ASSETS_PUBLISH_URL", value)
    with pytest.raises(SettingsError) as error:
        current()
    assert str(error.value).startswith("RAG_ASSETS_PUBLISH_URL=") and said in str(error.value)
    assert not any(secret in str(error.value) for secret in ("p@ss", "pa#ss", "12/ss", "hunter2", "pa'"))
    (tmp_path / "rag-assets.toml").write_text(f"[publish]\nurl = {value!r}\n")
    monkeypatch.delenv("RAG_ASSETS_PUBLISH_URL")
    monkeypatch.setenv("RAG_ASSETS_PROJECT", str(tmp_path / "rag-assets.toml"))
    with pytest.raises(SettingsError) as error:
        current()
    assert "[publish] url = " in str(error.value) and said in str(error.value)
    assert not any(secret in str(error.value) for secret in ("p@ss", "pa#ss", "12/ss", "hunter2"))


def test_a_publish_url_naming_its_password_as_a_variable_is_taken(monkeypatch):
    for value in ("postgresql://rag:${TEAM_DB_PASSWORD}@db/team", "sqlite:////tmp/team.db", "mysql://root@h:3306/x", ""):
        monkeypatch.setenv("RAG_ASSETS_PUBLISH_URL", value)
        assert current().publish.url == value


def test_values_come_from_their_variables_and_are_read_again_when_they_change(monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_ASSETS_OWNERS", "team:search, ana@example.com")
    monkeypatch.setenv("RAG_ASSETS_TAGS", "tier=eval,cost=low")
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    monkeypatch.setenv("DAGSTER_PG_URL", "postgresql://u@h/db")
    monkeypatch.setenv("RAG_ASSETS_NIGHTLY_CRON", "0 3 * * *")
    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "h" / ".." / "home"))
    monkeypatch.setenv("RAG_ASSETS_RETRIEVERS", "dense,bm25")
    configured = current()
    assert configured.catalog.owners == ["team:search", "ana@example.com"]
    assert configured.catalog.tags == {"tier": "eval", "cost": "low"}
    assert configured.scale_out.ray_address == "10.0.0.5:6379"
    assert configured.instance.postgres_url == "postgresql://u@h/db"
    assert configured.schedule.cron == "0 3 * * *"
    assert configured.home == tmp_path / "home"  # absolute, resolved
    assert configured.evaluation.retrievers == ["dense", "bm25"]
    monkeypatch.setenv("RAG_ASSETS_HNSW_M", "8")
    assert current().hnsw.m == 8 and configured.hnsw.m == 32  # read again, the old settings unchanged


def test_the_empty_out_of_domain_file_means_none_and_debug_reads_like_a_flag(monkeypatch):
    monkeypatch.setenv("RAG_ASSETS_OUT_OF_DOMAIN", "")
    monkeypatch.setenv("RAG_ASSETS_DEBUG", "0")
    assert current().out_of_domain == "" and current().debug is False
    monkeypatch.setenv("RAG_ASSETS_DEBUG", "1")
    assert current().debug is True


def test_the_resource_and_the_command_line_take_their_defaults_from_the_settings(monkeypatch):
    from rag_assets.cli import build_parser
    from rag_assets.resources import RagSettings

    monkeypatch.setenv("RAG_ASSETS_TOP_K", "7")
    monkeypatch.setenv("RAG_ASSETS_BM25_K1", "0.9")
    monkeypatch.setenv("RAG_ASSETS_CORPUS", "/docs/team")
    resource = RagSettings()
    assert (resource.top_k, resource.bm25.k1, resource.corpus_dir) == (7, 0.9, "/docs/team")
    assert resource.bm25_config().k1 == 0.9  # what the retriever receives
    args = build_parser(current()).parse_args(["evaluate"])
    assert (args.top_k, args.bm25_k1, args.corpus) == (7, 0.9, "/docs/team")
    assert "$RAG_ASSETS_TOP_K" in RagSettings.model_fields["top_k"].description


def test_a_settings_group_is_declared_once_and_its_run_config_is_generated_from_it():
    from rag_assets.lib.retrieve.config import BM25Parameters, HNSWParameters
    from rag_assets.resources import RagSettings, group_config

    # the groups lib receives are the models lib declares, read from the environment
    assert issubclass(settings.BM25, BM25Parameters) and issubclass(settings.HNSW, HNSWParameters)
    assert set(settings.BM25.model_fields) == set(BM25Parameters.model_fields)
    for group in ("bm25", "hnsw", "object_store"):
        nested = RagSettings.model_fields[group].annotation
        assert set(nested.model_fields) == set(group_config(group).model_fields) == set(settings.GROUPS[group].model_fields)
        assert all(f"${settings.variable(settings.GROUPS[group], name)}" in field.description
                   for name, field in nested.model_fields.items())


def test_the_library_defaults_are_the_settings_defaults():
    from rag_assets.lib.retrieve import ann, bm25, dense

    assert bm25.DEFAULT.k1 == settings.defaults(settings.BM25).k1 == 1.2
    assert ann.DEFAULT.m == settings.defaults(settings.HNSW).m
    assert dense.BLOCK_ROWS == settings.defaults(settings.ScaleOut).dense_block_rows


def test_every_setting_is_listed_with_its_variable():
    rows = {variable: (path, default) for variable, path, default, _ in settings.table()}
    assert rows["RAG_ASSETS_HOME"] == ("home", "storage")
    assert rows["RAY_ADDRESS"][0] == "scale_out.ray_address"
    assert rows["DAGSTER_PG_URL"][0] == "instance.postgres_url"
    assert rows["RAG_ASSETS_NIGHTLY_CRON"] == ("schedule.cron", "'0 2 * * *'")
    assert rows["RAG_ASSETS_BM25_K1"] == ("bm25.k1", "1.2")
    assert len(rows) == len(settings.table())  # one variable per setting


def test_nothing_is_read_at_import_time_and_a_bad_setting_is_told_when_the_definitions_load(tmp_path):
    """A models file that is not JSON and an unknown executor: importing the code location succeeds;
    loading it names the setting."""
    program = ("import rag_assets.definitions, rag_assets.cli, rag_assets.runner.evaluation\n"
               "print('imported')\n"
               "from rag_assets.definitions import defs\n"
               "try:\n    defs()\nexcept ValueError as error:\n    print(error)\n")
    broken = tmp_path / "models.json"
    broken.write_text("{not json")
    env = {"PATH": "/usr/bin:/bin", "RAG_ASSETS_EXECUTOR": "bogus", "RAG_ASSETS_MODELS_FILE": str(broken),
           "RAG_ASSETS_HOME": str(tmp_path / "home")}
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True)
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "imported"
    assert lines[1].startswith("RAG_ASSETS_EXECUTOR='bogus': Input should be")


def test_the_command_line_refuses_a_bad_setting_in_one_line(monkeypatch, capsys):
    from rag_assets.cli import EXIT_USAGE, main

    monkeypatch.setenv("RAG_ASSETS_SLOT_WAIT", "soon")
    assert main(["report"]) == EXIT_USAGE
    error = capsys.readouterr().err
    assert error.strip() == "rag-assets: error: RAG_ASSETS_SLOT_WAIT='soon': Input should be a valid number, unable " \
                            "to parse string as a number"


def test_the_margin_and_the_report_port_are_read_from_their_variables(monkeypatch):
    assert current().decision.margin == 0.05 and current().report_port == 3001
    monkeypatch.setenv("RAG_ASSETS_DECISION_MARGIN", "0.1")
    monkeypatch.setenv("RAG_ASSETS_REPORT_PORT", "3100")
    assert current().decision.margin == 0.1 and current().report_port == 3100
