"""Every bad input a person hands a command is told in one line naming the file, the line and the field at
fault, with the usage exit status (2), before anything is loaded or run: needle files, questions, choices and
session files, retrievers files, number options and the answer `ask --verify` checks."""

from __future__ import annotations

import json

import pytest

from rag_assets_tests.servers import cli, one_paragraph, tiny_home_env

pytestmark = [pytest.mark.integration]

NEEDLE = {"id": "k1", "doc_id": "guide/kettles.html",
          "needle": "Fill the kettle halfway with equal parts white vinegar and water, boil it, and let it stand for "
                    "one hour before rinsing.",
          "questions": {"doc": "How do I remove limescale from a kettle?", "ticket": "white crust in my kettle"}}


def usage_line(result, command: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout[-2000:], result.stderr[-3000:])
    return one_paragraph(result, command)


@pytest.mark.parametrize(("change", "named"), [
    ({"questions": {"doc": "q" * 9000, "ticket": "white crust"}}, "the 'doc' question is 9,000 characters long"),
    ({"questions": ["How do I descale?", "crust"]}, "'questions' must map phrasings to questions"),
    ({"id": None}, "'id' must be a non-empty string, not null"),
    ({"id": ""}, "'id' is empty"),
    ({"doc_id": 7}, "'doc_id' must be a non-empty string, not a number (7)"),
], ids=["long-question", "questions-list", "null-id", "empty-id", "number-doc-id"])
def test_needles_check_refuses_what_evaluate_refuses_in_one_line(tmp_path, change, named):
    needles = tmp_path / "needles.jsonl"
    needles.write_text(json.dumps(NEEDLE | {"id": "k0"}) + "\n" + json.dumps(NEEDLE | change) + "\n", encoding="utf-8")
    said = usage_line(cli(tiny_home_env(tmp_path / "home"), "needles", "check", str(needles)), "needles check")
    assert f"{needles}:2" in said and named in said, said


@pytest.mark.parametrize(("line", "named"), [
    ({"question": "", "choice": 1}, ':2: question must be a non-empty string, not ""'),
    ({"question": "q1", "choice": True}, ":2: choice is the offered sentence's number, from 1, not true"),
    ({"question": 5, "choice": 1}, ":2: question must be a non-empty string, not 5"),
    ({"question": "q1"}, ":2: a choice names its question (question or id) and one of choice"),
], ids=["empty-id", "true-choice", "number-id", "no-decision"])
def test_a_bad_choices_line_is_refused_before_anything_is_pooled(tmp_path, line, named):
    questions = tmp_path / "questions.txt"
    questions.write_text("How do I descale a kettle?\n", encoding="utf-8")
    choices = tmp_path / "choices.jsonl"
    choices.write_text(json.dumps({"question": "q1", "choice": 1}) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    said = usage_line(cli(tiny_home_env(home), "needles", "label", str(questions), "--choices", str(choices),
                          "--out", str(tmp_path / "out.jsonl")), "needles label")
    assert str(choices) in said and named in said, said
    assert not (tmp_path / "out.jsonl.session.json").exists() and not home.exists()


def test_a_question_longer_than_the_evaluation_takes_is_refused_naming_its_line(tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text("How do I descale a kettle?\n" + "why " * 2625 + "\n", encoding="utf-8")
    said = usage_line(cli(tiny_home_env(tmp_path / "home"), "needles", "label", str(questions), "--out",
                          str(tmp_path / "out.jsonl")), "needles label")
    assert f"{questions}:2: the question is 10,499 characters long; at most 8,000" in said, said


@pytest.mark.parametrize("text", ["[]", '{"version": 1, "questions": "many"}', "\xff"], ids=["list", "field", "binary"])
def test_needles_agree_refuses_a_file_that_is_not_a_session_in_one_line(tmp_path, text):
    bad = tmp_path / "bad.session.json"
    bad.write_bytes(text.encode("latin-1"))
    said = usage_line(cli(tiny_home_env(tmp_path / "home"), "needles", "agree", str(bad), str(bad)), "needles agree")
    assert str(bad) in said, said


@pytest.mark.parametrize(("entry", "named"), [
    ({"timeout": -1}, "entry 1 (key 'team'): timeout is -1: input should be greater than 0"),
    ({"in_flight": 0}, "entry 1 (key 'team'): in_flight is 0: input should be greater than or equal to 1"),
    ({"retries": -1}, "entry 1 (key 'team'): retries is -1: input should be greater than or equal to 0"),
    ({"timeout": "10"}, "entry 1 (key 'team'): timeout is '10'"),
], ids=["timeout", "in-flight", "retries", "string-timeout"])
def test_a_bad_retriever_entry_stops_evaluate_before_anything_runs(tmp_path, entry, named):
    retrievers = tmp_path / "retrievers.json"
    retrievers.write_text(json.dumps([{"key": "team", "kind": "http", "url": "http://127.0.0.1:9/search"} | entry]),
                          encoding="utf-8")
    home = tmp_path / "home"
    env = tiny_home_env(home) | {"RAG_ASSETS_RETRIEVERS_FILE": str(retrievers)}
    for command in (["evaluate", "--models", "wordllama", "--strategies", "boundaries"], ["backfill", "--model", "wordllama"]):
        said = usage_line(cli(env, *command), command[0])
        assert f"retrievers file {retrievers}, {named}" in said, said
    assert not home.exists()  # told before the Dagster folder is made, let alone the corpus observed


@pytest.mark.parametrize(("entry", "named"), [
    ({"name": "a/b", "unit": "tokens", "size": 100}, "entry 1 ('a/b'): key 'name' contains a character"),
    ({"name": "lc", "kind": "spacy", "unit": "tokens", "size": 100}, "entry 1 ('lc'): key 'kind': 'spacy' is not"),
    ({"name": "lc", "unit": "tokens", "size": 0}, "entry 1 ('lc'): key 'size': 0 is not a whole number from 1 to"),
    ({"name": "lc", "unit": "tokens", "size": 999999}, "entry 1 ('lc'): key 'size': 999999 is not a whole number from 1 to 2048"),
    ({"name": "lc", "unit": "tokens", "size": 100, "overlap": 100}, "entry 1 ('lc'): key 'overlap': 100 is not below the size 100"),
], ids=["path-name", "unknown-kind", "size-0", "size-huge", "overlap-size"])
def test_a_bad_strategy_entry_stops_evaluate_before_anything_runs(tmp_path, entry, named):
    strategies = tmp_path / "strategies.json"
    strategies.write_text(json.dumps([entry]), encoding="utf-8")
    home = tmp_path / "home"
    env = tiny_home_env(home) | {"RAG_ASSETS_STRATEGIES_FILE": str(strategies)}
    for command in (["evaluate", "--models", "wordllama"], ["backfill", "--model", "wordllama"]):
        said = usage_line(cli(env, *command), command[0])
        assert f"strategies file {strategies}, {named}" in said, said
    assert not home.exists()


def test_a_retrievers_file_that_is_not_utf8_is_named(tmp_path):
    retrievers = tmp_path / "retrievers.json"
    retrievers.write_bytes(b"\xff[]")
    said = usage_line(cli(tiny_home_env(tmp_path / "home") | {"RAG_ASSETS_RETRIEVERS_FILE": str(retrievers)},
                          "evaluate", "--models", "wordllama"), "evaluate")
    assert f"retrievers file {retrievers}: not UTF-8 (line 1, byte 0)" in said, said


@pytest.mark.parametrize(("command", "named"), [
    ("ask what --budget 1e20", "'1e20' is not a value of decision.budget"),
    ("ask what --budget 100000000000000000000", "decision.budget: input should be less than or equal to 1000000"),
    ("ask what --k 1e23", "'1e23' is not a value of evaluation.top_k"),
    ("evaluate --top-k 1e23", "'1e23' is not a value of evaluation.top_k"),
    ("evaluate --top-k 1000000000000000000000000", "evaluation.top_k: input should be less than or equal to 10000"),
], ids=["budget-float", "budget-huge", "k-float", "top-k-float", "top-k-huge"])
def test_a_number_option_out_of_its_range_is_one_line(tmp_path, command, named):
    said = usage_line(cli(tiny_home_env(tmp_path / "home"), *command.split()), command.split()[0])
    assert named in said, said


@pytest.mark.parametrize("variable", ["RAG_ASSETS_DECISION_BUDGET", "RAG_ASSETS_TOP_K", "RAG_ASSETS_DECISION_BUDGETS"])
def test_a_number_setting_out_of_its_range_is_one_line(tmp_path, variable):
    result = cli(tiny_home_env(tmp_path / "home") | {variable: "1" + "0" * 24}, "report")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-3000:]
    [line] = result.stderr.strip().splitlines()
    assert variable in line and ("less than or equal to 1" in line or "from 1 to 1,000,000" in line), line


@pytest.mark.parametrize(("content", "named"), [
    (b"\x89PNG\r\n\x1a\n\xff\xfe", "not UTF-8 text (byte 0)"),
    (b"a" * (1024 * 1024 + 1), "larger than 1,048,576 bytes"),
], ids=["binary", "too-large"])
def test_ask_verify_refuses_a_file_that_is_not_an_answer_before_loading_anything(tmp_path, content, named):
    answer = tmp_path / "answer.txt"
    answer.write_bytes(content)
    home = tmp_path / "home"
    said = usage_line(cli(tiny_home_env(home), "ask", "what is a list?", "--verify", str(answer)), "ask")
    assert f"--verify {answer}: {named}" in said, said
    assert not home.exists()


def test_a_publish_url_with_a_bad_ipv6_host_names_the_setting(tmp_path):
    result = cli(tiny_home_env(tmp_path / "home") | {"RAG_ASSETS_PUBLISH_URL": "postgresql://team@[::1/metrics"},
                 "report")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-3000:]
    [line] = result.stderr.strip().splitlines()
    assert "RAG_ASSETS_PUBLISH_URL" in line and "not a URL" in line, line
