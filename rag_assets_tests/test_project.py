"""The project file: `rag-assets init` writes it once; every command (from the project's folder or below),
the UI and the daemon read it; an environment variable overrides a value; a wrong value is one paragraph
naming the file and the key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets_tests.conftest import FIXTURES

pytestmark = [pytest.mark.integration]

PROJECT = Path(__file__).resolve().parents[1]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without any rag-assets setting (the project file must do it all)."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("RAG_ASSETS_") and name not in ("DAGSTER_HOME", "RAY_ADDRESS", "DAGSTER_PG_URL")}
    return env | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(PROJECT)} | extra


def cli(cwd: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rag_assets.cli", *args], cwd=cwd, env=clean_env(**extra),
                          capture_output=True, text=True, timeout=600)  # a guard against a hang, not a speed limit


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "team-docs"
    shutil.copytree(FIXTURES / "tiny_corpus", folder / "docs")
    shutil.copy(FIXTURES / "tiny_needles.jsonl", folder / "needles.jsonl")
    made = cli(folder, "init")
    assert made.returncode == 0, made.stderr
    path = folder / "rag-assets.toml"
    path.write_text(path.read_text().replace('models = ["all-MiniLM-L6-v2"]', 'models = ["wordllama"]')
                    .replace('strategies = ["boundaries_header", "boundaries"]', 'strategies = ["boundaries"]'))
    return folder


def test_init_writes_the_project_file_once(project):
    again = cli(project, "init")
    assert again.returncode == 1 and "already exists; nothing was written" in again.stderr
    text = (project / "rag-assets.toml").read_text()
    assert 'corpus = "docs"' in text and 'eval_set = "needles.jsonl"' in text and "[schedule]" in text


def test_every_command_reads_the_project_file_and_a_variable_overrides_it(project):
    below = project / "docs" / "guide"  # any folder of the project
    run = cli(below, "evaluate")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "running model_partition [wordllama x boundaries]" in run.stdout  # the file's models and strategies
    assert (project / ".rag-assets" / "metrics.duckdb").is_file()  # the file's storage folder, relative to it
    assert "3 documents (3 ok" in run.stdout  # its corpus
    report = cli(below, "report")
    assert report.returncode == 0 and "| wordllama | boundaries |" in report.stdout
    elsewhere = project.parent / "elsewhere"
    overridden = cli(project, "evaluate", RAG_ASSETS_HOME=str(elsewhere))
    assert overridden.returncode == 0 and (elsewhere / "metrics.duckdb").is_file()
    # the UI's code location and daemon run from the package's folder: RAG_ASSETS_PROJECT names the file
    probe = subprocess.run([sys.executable, "-c", "from rag_assets.settings import current; print(current().home)"],
                           cwd=PROJECT, env=clean_env(RAG_ASSETS_PROJECT=str(project / "rag-assets.toml")),
                           capture_output=True, text=True)
    assert probe.stdout.strip() == str(project / ".rag-assets")


@pytest.mark.parametrize(("line", "said"), [
    ("colour = 5", "rag-assets.toml: unknown key(s) colour in [schedule]; it has cron"),
    ("[bm25]\nk1 = \"high\"", "rag-assets.toml: [bm25] k1 = 'high': Input should be a valid number"),
    ("[magic]\nx = 1", "rag-assets.toml: unknown table [magic]"),
    ("corpus = [", "rag-assets.toml: not TOML"),
], ids=["key", "value", "table", "syntax"])
def test_a_wrong_value_is_one_paragraph_naming_the_file_and_key(project, line, said):
    path = project / "rag-assets.toml"
    path.write_text(path.read_text() + "\n" + line + "\n")
    result = cli(project, "report")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [paragraph] = result.stderr.strip().splitlines()
    assert said in paragraph and str(path) in paragraph, paragraph


def test_needles_suggest_drafts_a_file_that_check_reports_as_a_draft_then_accepts(project):
    suggested = cli(project, "needles", "suggest", "drafted.jsonl", "--per-document", "2")
    assert suggested.returncode == 0, suggested.stderr[-2000:]
    assert "needle candidates from 3 documents written to drafted.jsonl" in suggested.stdout
    lines = [json.loads(line) for line in (project / "drafted.jsonl").read_text().splitlines()]
    assert 3 <= len(lines) <= 6 and {line["doc_id"] for line in lines} == {
        "toasters.html", "guide/kettles.html", "fridge-notes.txt"}
    assert all(line["questions"] == {"doc": "", "ticket": ""} and "#char=" in line["locator"] for line in lines)
    draft = cli(project, "needles", "check", "drafted.jsonl")
    assert draft.returncode == 0, draft.stdout + draft.stderr  # a draft is not an error
    assert f"draft: {len(lines)} of {len(lines)} needles have no question yet" in draft.stdout
    assert "coverage: 3 of 3 documents have a needle" in draft.stdout
    for line in lines:
        line["questions"] = {"doc": "What does the page advise?", "ticket": "help with my appliance please"}
    lines.append(dict(lines[0], id="dup"))  # the same sentence twice: it occurs once, the id is new
    (project / "drafted.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    written = cli(project, "needles", "check", "drafted.jsonl")
    assert written.returncode == 0 and "draft:" not in written.stdout
    lines[-1] = dict(lines[0])  # an id used twice: the evaluation would refuse it
    (project / "drafted.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    refused = cli(project, "needles", "check", "drafted.jsonl")
    assert refused.returncode == 1
    assert f"drafted.jsonl:{len(lines)}: id {lines[0]['id']!r} is used already at " in refused.stdout


def test_a_project_file_that_is_not_utf8_is_one_line_for_every_command_help_included(project):
    path = project / "rag-assets.toml"
    path.write_bytes(path.read_bytes() + b'\n# caf\xe9\n')
    line_of_the_byte = path.read_bytes().count(b"\n")
    for command in ("--help", "report", "evaluate", "ask what"):
        result = cli(project, *command.split())
        assert result.returncode == 2 and "Traceback" not in result.stderr, (command, result.stderr[-2000:])
        [line] = result.stderr.strip().splitlines()
        assert f"{path}: not UTF-8 (line {line_of_the_byte}," in line and "save it as UTF-8" in line, line


def test_a_project_file_with_a_byte_order_mark_is_read(project):
    path = project / "rag-assets.toml"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = cli(project, "report")
    assert result.returncode == 4, result.stderr  # no results yet: the file was read, its storage folder named
    assert str(project / ".rag-assets" / "metrics.duckdb") in result.stdout + result.stderr


def test_every_command_names_the_project_file_it_read_and_a_corpus_outside_it(project, tmp_path):
    below = project / "docs"
    report = cli(below, "report")
    assert f"rag-assets report: project file {project / 'rag-assets.toml'}" in report.stderr
    outside = tmp_path / "another-corpus"
    shutil.copytree(FIXTURES / "tiny_corpus", outside)
    run = cli(below, "evaluate", "--corpus", str(outside))
    assert run.returncode == 0, run.stderr[-2000:]
    said = run.stderr.index(f"the corpus {outside} lies outside this project's folder {project}")
    assert said < run.stderr.index("rag-assets evaluate: project file") + 500 and ".rag-assets" in run.stderr
    inside = cli(below, "evaluate")
    assert "lies outside" not in inside.stderr


def test_needles_check_refuses_a_file_without_a_needle(project):
    (project / "empty.jsonl").write_text("", encoding="utf-8")
    result = cli(project, "needles", "check", "empty.jsonl")
    assert result.returncode == 1 and "holds no needle (the evaluation would refuse it)" in result.stderr


def test_init_writes_valid_toml_whatever_the_corpus_is_called(tmp_path):
    import tomllib

    folder = tmp_path / "quoted"
    name = 'my "docs"\nhome = "/etc"'  # a quote, a newline and a key a template would let in
    made = cli(tmp_path, "init", str(folder), "--corpus", name)
    assert made.returncode == 0, made.stderr
    values = tomllib.loads((folder / "rag-assets.toml").read_text(encoding="utf-8"))
    assert values["corpus"] == name and values["home"] == ".rag-assets"


def test_init_without_docs_indexes_the_folder_but_not_the_projects_own_files(tmp_path):
    folder = tmp_path / "flat"
    shutil.copytree(FIXTURES / "tiny_corpus", folder)
    shutil.copy(FIXTURES / "tiny_needles.jsonl", folder / "needles.jsonl")
    assert cli(folder, "init").returncode == 0
    path = folder / "rag-assets.toml"
    assert 'corpus = "."' in path.read_text()
    path.write_text(path.read_text().replace('models = ["all-MiniLM-L6-v2"]', 'models = ["wordllama"]')
                    .replace('strategies = ["boundaries_header", "boundaries"]', 'strategies = ["boundaries"]'))
    run = cli(folder, "evaluate")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "3 documents (3 ok, 0 failed" in run.stdout, run.stdout[-3000:]
    assert "needles.jsonl" not in run.stdout.split("documents (")[1].split("\n")[0]


def test_init_offers_the_strategies_file_commented_out_and_uncommenting_it_is_valid():
    """No sweep by default (each point chunks and embeds the corpus again); the line that adds one is there, and
    uncommented (with strategies = [] as it says) it reads as a project file."""
    import tomllib

    from rag_assets.cli.project import project_toml

    text = project_toml("docs")
    assert "strategies_file" not in tomllib.loads(text)
    line = next(line for line in text.splitlines() if line.startswith("# strategies_file = "))
    opened = text.replace(line, line[2:]).replace('strategies = ["boundaries_header", "boundaries"]', "strategies = []")
    values = tomllib.loads(opened)
    assert values["strategies_file"] == "strategies.toml" and values["strategies"] == []
