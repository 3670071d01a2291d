"""`rag-assets needles label` end to end: real questions pooled from every configuration of the latest
evaluation, decided in a real terminal (tmux) and from a choices file, written as a needle file that
`needles check` passes and `evaluate` accepts; `needles agree` on two labellers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from rag_assets_tests.servers import WORDLLAMA, cli, tiny_home_env

pytestmark = [pytest.mark.integration]

QUESTIONS = ["white crust inside my kettle, how do I get rid of it?", "my toaster smells burnt, should I clean "
             "something out of it?", "how cold should my fridge be?", "What is the capital of France?"]


FRIDGE = "Keep the refrigerator between three and five degrees Celsius so that food stays fresh without freezing."
TEAM_STORE = f"def search(query, k):\n    return [{{'text': {FRIDGE!r}}}][:k]\n"  # the team's own index, always the fridge


def with_team_store(env: dict, home: Path) -> dict:
    """The environment with the team's retriever registered (a python retriever beside the storage folder)."""
    return env | {"RAG_ASSETS_RETRIEVERS_FILE": str(home.parent / "retrievers.json"),
                  "PYTHONPATH": os.pathsep.join([str(home.parent), env.get("PYTHONPATH", "")])}


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("labelling") / "home"
    (home.parent / "team_store_labelling.py").write_text(TEAM_STORE)
    (home.parent / "retrievers.json").write_text(json.dumps([{"key": "team", "kind": "python",
                                                              "target": "team_store_labelling:search"}]))
    result = cli(with_team_store(tiny_home_env(home), home), "evaluate", *WORDLLAMA)
    assert result.returncode == 0, result.stderr[-3000:]
    return home


def test_the_teams_external_retriever_is_pooled_unless_left_out(evaluated, tmp_path):
    env = with_team_store(tiny_home_env(evaluated), evaluated)
    (tmp_path / "questions.txt").write_text(QUESTIONS[0] + "\n")
    counts = {}
    for name, options in (("with", []), ("without", ["--without-external"])):
        out = tmp_path / f"{name}.jsonl"
        run = cli(env, "needles", "label", str(tmp_path / "questions.txt"), "--out", str(out), "--choices",
                  "/dev/null", *options)
        assert run.returncode == 0, run.stderr[-3000:]
        session = json.loads(out.with_name(out.name + ".session.json").read_text())
        counts[name] = next(o["configurations"] for o in offered(out, QUESTIONS[0]) if o["text"] == FRIDGE)
        assert ("external: team" in session["configurations"]) == (name == "with")
        assert ("external retriever team (left out)" in session["left_out"]) == (name == "without")
    assert counts["with"] == counts["without"] + 1  # the team's index put the fridge sentence in the pool once more


def offered(out: Path, question: str) -> list[dict]:
    from rag_assets.lib.evalsets.questions import question_id

    session = json.loads(out.with_name(out.name + ".session.json").read_text())
    return session["offers"][question_id(question)]


def test_a_choices_file_labels_real_questions_into_needles_the_evaluation_accepts(evaluated, tmp_path):
    env = tiny_home_env(evaluated)
    (tmp_path / "questions.txt").write_text("\n".join(QUESTIONS + [QUESTIONS[2].upper()]) + "\n")
    out = tmp_path / "labelled.jsonl"
    first = cli(env, "needles", "label", str(tmp_path / "questions.txt"), "--out", str(out), "--choices", "/dev/null")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "4 questions (4 new), 0 decided; pooled from" in first.stdout  # the repeated question once
    needles = [json.loads(line) for line in (Path(__file__).parent / "fixtures" / "tiny_needles.jsonl").read_text().splitlines()]
    choices = []
    for question, needle in zip(QUESTIONS[:3], needles):
        texts = [o["text"] for o in offered(out, question) if not o["problem"]]
        assert needle["needle"] in texts[:5], (question, texts[:5])  # the true needle is offered near the top
        choices.append({"question": question, "sentence": needle["needle"]})
    choices.append({"question": QUESTIONS[3], "kind": "off_topic"})
    (tmp_path / "choices.jsonl").write_text("".join(json.dumps(c) + "\n" for c in choices))
    run = cli(env, "needles", "label", str(tmp_path / "questions.txt"), "--out", str(out), "--choices",
              str(tmp_path / "choices.jsonl"))
    assert run.returncode == 0, run.stderr[-3000:]
    assert "3 needles from 3 questions" in run.stdout and "1 not answered by this corpus (0 near, 1 off-topic)" in run.stdout
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(w["needle"], w["questions"]) for w in written] == [
        (n["needle"], {"ticket": q}) for q, n in zip(QUESTIONS, needles)]
    ood = tmp_path / "labelled.out_of_domain.jsonl"
    from rag_assets.lib.evalsets.questions import question_id

    assert json.loads(ood.read_text()) == {"id": question_id(QUESTIONS[3]), "query": QUESTIONS[3], "kind": "off_topic"}
    check = cli(env, "needles", "check", str(out))
    assert check.returncode == 0, check.stdout + check.stderr
    evaluated_again = cli(env | {"RAG_ASSETS_EVAL_SET": str(out), "RAG_ASSETS_OUT_OF_DOMAIN": str(ood),
                                 "RAG_ASSETS_HOME": str(tmp_path / "labelled-home"),
                                 "DAGSTER_HOME": str(tmp_path / "labelled-home" / "dagster")}, "evaluate", *WORDLLAMA)
    assert evaluated_again.returncode == 0, evaluated_again.stderr[-3000:]
    assert "3 needles" in evaluated_again.stdout, evaluated_again.stdout[-3000:]


DOCS_PHRASING = "At what temperature is a refrigerator kept?"


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", "rag-assets-test", *args], capture_output=True, text=True, check=True).stdout


def screen_until(said: str, seconds: float = 120, session: str = "label") -> str:
    deadline = time.monotonic() + seconds  # a guard against a hang, not a speed limit
    shown = ""
    while time.monotonic() < deadline:
        shown = tmux("capture-pane", "-p", "-t", session)
        if said in shown:
            return shown
        time.sleep(0.3)
    raise AssertionError(f"{said!r} never shown; the screen:\n{shown}")


def test_labelling_in_a_real_terminal_picks_undoes_stops_and_resumes(evaluated, tmp_path):
    assert shutil.which("tmux"), "tmux is needed (make test installs it)"
    env = tiny_home_env(evaluated)
    (tmp_path / "questions.txt").write_text("\n".join(QUESTIONS) + "\n")
    out = tmp_path / "labelled.jsonl"
    exports = " ".join(f"{name}={subprocess.list2cmdline([value])}" for name, value in env.items()
                       if name.startswith(("RAG_ASSETS_", "DAGSTER_", "HF_", "TRANSFORMERS_")))
    command = (f"cd {Path(__file__).resolve().parents[1]} && env {exports} {shutil.which('python') or 'python'} -m "
               f"rag_assets.cli needles label {tmp_path / 'questions.txt'} --out {out}; echo EXITED $?; sleep 600")
    from rag_assets_tests.servers import PROJECT  # the interpreter of the tests, in the terminal

    command = command.replace(shutil.which("python") or "python", str(PROJECT / ".venv" / "bin" / "python"))
    subprocess.run(["tmux", "-L", "rag-assets-test", "kill-server"], capture_output=True)  # one an earlier run left
    tmux("new-session", "-d", "-s", "label", "-x", "200", "-y", "60", command)
    try:
        screen = screen_until("Question 1 of 4")
        assert QUESTIONS[0] in screen and " 1 " in screen
        tmux("send-keys", "-t", "label", "1")
        screen = screen_until("Question 2 of 4")
        assert QUESTIONS[1] in screen and "1 answered" in screen
        tmux("send-keys", "-t", "label", "n")
        screen_until("Question 3 of 4")
        tmux("send-keys", "-t", "label", "u")  # undo: the toaster question again
        screen = screen_until("undone")
        assert "Question 2 of 4" in screen and QUESTIONS[1] in screen
        tmux("send-keys", "-t", "label", "1")
        screen_until("Question 3 of 4")
        tmux("send-keys", "-t", "label", "q")  # stop: what was decided is written
        screen_until("EXITED 0")
        assert len(out.read_text().splitlines()) == 2
        # resume in a second session: the first stays (its shell sleeps), since the server ends with its last
        # session and a session started at once can meet it exiting (new-session's exit status 1, seen on CI)
        tmux("new-session", "-d", "-s", "resumed", "-x", "200", "-y", "60", command)
        screen = screen_until("Question 3 of 4", session="resumed")
        assert QUESTIONS[2] in screen and "2 answered" in screen
        tmux("send-keys", "-t", "resumed", "d")  # the question in the documentation's words, then the pick
        screen_until("in the documentation's words", session="resumed")
        tmux("send-keys", "-t", "resumed", "-l", DOCS_PHRASING)
        tmux("send-keys", "-t", "resumed", "Enter")
        screen = screen_until("docs phrasing kept", session="resumed")
        assert f"in the docs' words: {DOCS_PHRASING}" in screen and "Question 3 of 4" in screen
        tmux("send-keys", "-t", "resumed", "1")
        screen_until("Question 4 of 4", session="resumed")
        tmux("send-keys", "-t", "resumed", "o")
        screen_until("Every question has a decision", session="resumed")
        tmux("send-keys", "-t", "resumed", "q")
        screen = screen_until("EXITED 0", session="resumed")
    finally:
        subprocess.run(["tmux", "-L", "rag-assets-test", "kill-server"], capture_output=True)
    assert len(out.read_text().splitlines()) == 3
    assert json.loads(out.read_text().splitlines()[2])["questions"] == {"ticket": QUESTIONS[2], "doc": DOCS_PHRASING}
    assert json.loads((tmp_path / "labelled.out_of_domain.jsonl").read_text())["kind"] == "off_topic"
    # a second labeller, from a choices file, compared
    second = tmp_path / "second.jsonl"
    (tmp_path / "choices.jsonl").write_text("".join(json.dumps(c) + "\n" for c in [
        {"question": QUESTIONS[0], "choice": 1}, {"question": QUESTIONS[1], "kind": "near"},
        {"question": QUESTIONS[2], "choice": 1}, {"question": QUESTIONS[3], "kind": "off_topic"}]))
    assert cli(env, "needles", "label", str(tmp_path / "questions.txt"), "--out", str(second), "--choices",
               str(tmp_path / "choices.jsonl"), "--labeller", "b").returncode == 0
    agree = cli(env, "needles", "agree", str(out) + ".session.json", str(second) + ".session.json")
    assert agree.returncode == 0, agree.stderr
    assert "4 questions decided by both" in agree.stdout and "1. " + QUESTIONS[1] in agree.stdout
    assert "answered / not answered: Cohen's kappa 0.500, 75% agree" in agree.stdout, agree.stdout


def test_the_traces_of_ask_are_read_back_against_the_needles(evaluated, tmp_path):
    env = tiny_home_env(evaluated)
    (tmp_path / "answer.txt").write_text("Use vinegar and water [1].")
    asked = cli(env, "ask", QUESTIONS[0], "--verify", str(tmp_path / "answer.txt"))
    assert asked.returncode == 0, asked.stderr[-2000:]
    assert cli(env, "ask", "A question no needle has").returncode in (0, 3)
    result = cli(env, "needles", "diagnose", "--format", "json")
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout)
    assert found["with_needle"] == 1 and found["traces"] >= 2
    [diagnosis] = found["diagnoses"]
    assert diagnosis["needle_id"] == "k1" and diagnosis["side"] in ("cited", "generation", "context", "retrieval")
    table = cli(env, "needles", "diagnose")
    assert "| k1 |" in table.stdout and f"{diagnosis['side']}: 1" in table.stdout


@pytest.mark.servers
def test_questions_are_read_from_the_teams_trace_table_in_postgresql(tmp_path):
    import psycopg2

    from rag_assets.lib.evalsets.questions import QuestionsError, read_questions
    from rag_assets_tests.servers import PostgresServer

    server = PostgresServer(tmp_path / "pg")
    try:
        with psycopg2.connect(server.url) as connection, connection.cursor() as cursor:
            cursor.execute("CREATE TABLE rag_trace (id serial, question text, retrieved text[], cited text[], "
                           "latency_ms real, asked timestamptz DEFAULT now())")
            cursor.executemany("INSERT INTO rag_trace (question) VALUES (%s)",
                               [(QUESTIONS[0],), (QUESTIONS[1],), (QUESTIONS[0].upper(),)])
        found = read_questions(server.url, query="SELECT question FROM rag_trace ORDER BY id")
        assert [q.text for q in found] == QUESTIONS[:2] and [q.source for q in found] == ["postgresql, row 1 of the query", "postgresql, row 2 of the query"]
        with pytest.raises(QuestionsError, match="relation \"nowhere\" does not exist"):
            read_questions(server.url, query="SELECT question FROM nowhere")
        with pytest.raises(QuestionsError, match=r"PostgreSQL \(postgresql://rag:\*\*\*@"):
            read_questions(server.url.replace("rag@", "rag:secret@").replace(str(server.port), "1"), query="SELECT 1")
        # the same table read back: which side failed, against the team's own chunk table
        needles = [json.loads(line) for line in (Path(__file__).parent / "fixtures" / "tiny_needles.jsonl").read_text().splitlines()]
        with psycopg2.connect(server.url) as connection, connection.cursor() as cursor:
            cursor.execute("CREATE TABLE chunks (chunk_id int PRIMARY KEY, body text)")
            cursor.executemany("INSERT INTO chunks VALUES (%s, %s)", [
                (1, "Unrelated text."), (2, "Descaling. " + needles[0]["needle"]), (3, "Storage: " + needles[2]["needle"])])
            cursor.execute("DELETE FROM rag_trace")
            cursor.executemany("INSERT INTO rag_trace (question, retrieved, cited) VALUES (%s, %s, %s)", [
                (QUESTIONS[0], ["1", "2"], ["2"]), (QUESTIONS[1], ["1"], ["1"]), (QUESTIONS[2], ["3", "1"], ["1"]),
                (QUESTIONS[3], ["1"], None), (needles[2]["questions"]["doc"], ["3"], None)])
        env = tiny_home_env(tmp_path / "home")
        options = ["--traces", server.url, "--query", "SELECT asked AS asked_at, question, retrieved, cited FROM rag_trace ORDER BY id",
                   "--chunks-query", "SELECT chunk_id AS id, body AS text FROM chunks"]
        diagnosed = cli(env, "needles", "diagnose", *options, "--format", "json")
        assert diagnosed.returncode == 0, diagnosed.stderr[-3000:]
        found = json.loads(diagnosed.stdout)
        assert (found["traces"], found["with_needle"]) == (5, 4)
        assert [(d["needle_id"], d["side"], d["rank"]) for d in found["diagnoses"]] == [
            ("k1", "cited", 2), ("t1", "retrieval", None), ("f1", "generation", 1), ("f1", "sent, not verified", 1)]
        table = cli(env, "needles", "diagnose", *options)
        assert "retrieval: 1; generation: 1; cited: 1; sent, not verified: 1" in table.stdout, table.stdout
        missing = cli(env, "needles", "diagnose", "--traces", server.url, "--query", "SELECT question FROM rag_trace",
                      "--chunks-query", "SELECT chunk_id AS id, body AS text FROM chunks")
        assert missing.returncode == 1 and "no column 'retrieved' (it returns question; name them with AS)" in missing.stderr
        assert "needs --query" in cli(env, "needles", "diagnose", "--traces", server.url).stderr

        # the team's database is only read: a query that writes fails in its read-only transaction, and
        # nothing it did is kept (diagnose's queries and the questions' alike)
        with psycopg2.connect(server.url) as connection, connection.cursor() as cursor:
            cursor.execute("CREATE TABLE canary (id int)")
        hostile = cli(env, "needles", "diagnose", "--traces", server.url, "--query",
                      "DROP TABLE canary; SELECT question, retrieved FROM rag_trace",
                      "--chunks-query", "SELECT chunk_id AS id, body AS text FROM chunks")
        assert hostile.returncode == 1 and "read-only transaction" in hostile.stderr, hostile.stderr[-2000:]
        assert len(hostile.stderr.strip().splitlines()) == 1
        sneaky = cli(env, "needles", "diagnose", *options[:4], "--chunks-query",
                     "SELECT chunk_id AS id, body AS text FROM chunks; INSERT INTO canary VALUES (1)")
        assert sneaky.returncode == 1 and "read-only transaction" in sneaky.stderr, sneaky.stderr[-2000:]
        with pytest.raises(QuestionsError, match="read-only transaction"):
            read_questions(server.url, query="DELETE FROM rag_trace RETURNING question")
        with psycopg2.connect(server.url) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM canary")
            assert cursor.fetchone() == (0,)  # still there, and empty
            cursor.execute("SELECT count(*) FROM rag_trace")
            assert cursor.fetchone() == (5,)
    finally:
        server.stop()
