"""The defects a hostile but fair tester found in the second round (issue 26), each reproduced through the
command line as a person meets it: real processes, real signals, real files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets_tests.servers import tiny_home_env

pytestmark = [pytest.mark.integration]

PROJECT = Path(__file__).resolve().parents[1]
WORDLLAMA = ["--models", "wordllama", "--strategies", "boundaries"]


def cli(env: dict, *args: str, cwd: Path = PROJECT, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rag_assets.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)  # a guard against a hang, not a speed limit


def one_paragraph(result: subprocess.CompletedProcess, command: str) -> str:
    """The single line a failed command printed on stderr (no traceback)."""
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-3000:]
    [paragraph] = result.stderr.strip().splitlines()
    assert paragraph.startswith(f"rag-assets {command}: "), paragraph
    return paragraph


def halve(path: Path) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def history_runs(env: dict) -> list[str]:
    result = cli(env, "history", "--model", "wordllama", "--strategy", "boundaries")
    assert result.returncode == 0, result.stderr
    return [line.split("|")[1].strip() for line in result.stdout.splitlines() if line.startswith("| ")
            and not line.startswith(("| run", "|---"))]


def test_a_damaged_metrics_database_is_named_set_aside_and_rebuilt_with_the_history_before_it(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    for _ in range(2):  # two evaluation runs: the second keeps the first's file as metrics.duckdb.previous
        assert cli(env, "evaluate", *WORDLLAMA, "--rebuild").returncode == 0
    [first, second] = history_runs(env)
    database = home / "metrics.duckdb"
    assert (home / "metrics.duckdb.previous").exists()
    halve(database)

    # every reader names the file and the command that rebuilds it, in one paragraph, exit 1
    for command in (["report"], ["history"], ["ask", "What is a list?"], ["export", str(tmp_path / "out")]):
        result = cli(env, *command)
        assert result.returncode == 1, (command, result.stderr)
        paragraph = one_paragraph(result, command[0])
        assert f"{database} is damaged" in paragraph and "rag-assets evaluate" in paragraph, paragraph

    # evaluate (also without --rebuild, with nothing else changed) sets it aside, kept, and rebuilds it
    result = cli(env, "evaluate", *WORDLLAMA)
    assert result.returncode == 0, result.stderr[-3000:]
    [aside] = list(home.glob("metrics.duckdb.damaged-*"))
    assert f"warning: {database} was damaged" in result.stdout and aside.name in result.stdout
    assert "comes from metrics.duckdb.previous" in result.stdout
    # the history up to the file before the damaged one, and the run that rebuilt it; the damaged file's own
    # run is said to be only in the file set aside
    runs = history_runs(env)
    assert runs[0] == first and second not in runs and len(runs) == 2
    assert cli(env, "report").returncode == 0


def test_a_damaged_database_without_a_whole_earlier_copy_starts_the_history_again_and_says_so(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0  # the first run: no earlier file to keep
    assert not (home / "metrics.duckdb.previous").exists()
    (home / "metrics.duckdb").write_bytes(b"not a DuckDB file at all\n" * 100)
    result = cli(env, "evaluate", *WORDLLAMA)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "no whole earlier copy (metrics.duckdb.previous)" in result.stdout
    assert len(history_runs(env)) == 1
    [aside] = list(home.glob("metrics.duckdb.damaged-*"))
    assert aside.read_bytes().startswith(b"not a DuckDB file")


def recorded_runs(home: Path) -> int:
    import duckdb

    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        return connection.sql("SELECT count(*) FROM evaluation_runs").fetchall()[0][0]


def unfinished_runs(home: Path) -> list[str]:
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        return [f"{run.job_name} {run.status}" for run in instance.get_runs() if not run.is_finished]


STAGES = ["running observe_inputs", "running evaluation_inputs", "running chunking", "running model_partition",
          "running evaluation_metrics"]


@pytest.mark.servers
@pytest.mark.parametrize("to_group", [False, True], ids=["to-the-process", "to-its-group-as-a-terminal-does"])
def test_ctrl_c_is_honoured_at_every_stage_in_one_line(tmp_path, to_group):
    import os
    import signal
    import time

    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    for stage in STAGES:
        for delay in (0.0, 0.3):
            before = recorded_runs(home)
            process = subprocess.Popen([sys.executable, "-m", "rag_assets.cli", "evaluate", *WORDLLAMA, "--rebuild"],
                                       env=env, cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, start_new_session=to_group)
            for line in process.stdout:
                if line.startswith(f"rag-assets: {stage}"):
                    break
            time.sleep(delay)
            if to_group:
                os.killpg(process.pid, signal.SIGINT)  # the terminal's Ctrl-C: every process of the group
            else:
                process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=300)  # a guard against a hang, not a speed limit
            case = f"{stage} + {delay} s"
            if process.returncode == 0:  # only when the whole command had ended before the signal arrived
                assert stage == STAGES[-1] and "Traceback" not in stderr, (case, stderr)
                continue
            assert process.returncode == 130, (case, stdout[-2000:], stderr[-2000:])
            assert "Traceback" not in stdout + stderr, (case, stderr[-3000:])
            [said] = stderr.strip().splitlines()
            assert said.startswith("rag-assets evaluate: interrupted"), (case, said)
            assert unfinished_runs(home) == [], case  # no run is left "started"
            # nothing new is recorded, unless the metrics had finished and the line says so
            finished = "evaluation_metrics finished" in said and "recorded as a success" in said
            assert recorded_runs(home) == before + finished, (case, said)


@pytest.mark.parametrize("key", ["../../evil", "/tmp/evil", "a\x00b", "x" * 300], ids=["dot-dot", "absolute", "nul", "long"])
def test_a_model_key_that_would_leave_the_storage_folder_is_refused_when_registered(tmp_path, key):
    import json

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
], ids=["executor", "timeout", "not-json", "not-a-list", "unknown-field", "missing-file"])
def test_a_start_up_error_is_one_paragraph_naming_the_setting_or_file(tmp_path, variables, status, named):
    (tmp_path / "not-json.json").write_text("{oops", encoding="utf-8")
    (tmp_path / "object.json").write_text('{"key": "x"}', encoding="utf-8")
    (tmp_path / "unknown.json").write_text('[{"key": "x", "loader": "wordllama", "package": "wordllama", '
                                           '"dimension": 256, "window": null, "colour": "red"}]', encoding="utf-8")
    env = tiny_home_env(tmp_path / "home") | {name: value.format(folder=tmp_path) for name, value in variables.items()}
    commands = ["evaluate", "backfill --model wordllama"] + (["report", "ask what"] if status == 2 else [])
    for command in commands:  # a bad setting stops every command; the registry stops those that read it
        result = cli(env, *command.split())
        assert result.returncode == status, (command, result.stderr[-3000:])
        assert "Traceback" not in result.stdout + result.stderr, (command, result.stderr[-3000:])
        [paragraph] = result.stderr.strip().splitlines()
        assert named in paragraph, (command, paragraph)


def stored_bytes(home: Path, asset: str) -> dict[str, bytes]:
    root = home / "parquet" / asset
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("data.parquet"))}


def test_a_refused_corpus_never_replaces_the_snapshot_of_the_good_one(tmp_path):
    from dagster import AssetKey, DagsterInstance

    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    before = {asset: stored_bytes(home, asset) for asset in ("corpus_snapshot", "extracted_text", "chunks")}
    broken = tmp_path / "broken-corpus"
    broken.mkdir()
    (broken / "a.pdf").write_bytes(b"\x00\x01\x02 not a pdf")
    (broken / "b.html").write_bytes(b"\xff\xfe\x00\x00binary")
    result = cli(env, "evaluate", *WORDLLAMA, "--corpus", str(broken))
    assert result.returncode == 1
    said = one_paragraph(result, "evaluate")
    assert "every one of the 2 documents" in said and "a.pdf: corrupt PDF" in said, said
    assert {asset: stored_bytes(home, asset) for asset in before} == before
    with DagsterInstance.from_config(str(home / "dagster")) as instance:  # Dagster's own record agrees
        latest = instance.get_latest_materialization_event(AssetKey("corpus_snapshot")).asset_materialization
        assert str(broken) not in str(latest.metadata["corpus_dir"].value)


class _NotUnitLength:
    """Claims unit vectors and returns vectors twice as long (a broken model or pooling change)."""

    def __init__(self, key: str) -> None:
        from rag_assets_tests.fakes import HashingEmbedder

        self.inner = HashingEmbedder(key)
        self.revision = "hashing-2"

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed(self, texts):
        return self.inner.embed(texts) * 2


def test_what_a_blocking_check_would_reject_never_replaces_the_last_good_partition(tmp_path):
    from dagster import DagsterInstance

    from rag_assets.resources import RagSettings
    from rag_assets.runner.evaluation import materialize_all
    from rag_assets_tests.conftest import FIXTURES
    from rag_assets_tests.fakes import FakeEmbeddingModels

    class LongVectors(FakeEmbeddingModels):
        def get(self, key):
            return _NotUnitLength(key)

        def installed_revision(self, key):
            return "hashing-2"

    class WeightsChangedUnderfoot(FakeEmbeddingModels):  # the index was built with other weights than installed
        def installed_revision(self, key):
            return "hashing-9"

    home = tmp_path / "home"
    settings = RagSettings(home=str(home), corpus_dir=str(FIXTURES / "tiny_corpus"),
                           eval_set=str(FIXTURES / "tiny_needles.jsonl"),
                           out_of_domain=str(FIXTURES / "tiny_out_of_domain.jsonl"))
    run = dict(settings=settings, instance=DagsterInstance.ephemeral(), model_keys=["all-MiniLM-L6-v2"],
               strategies=["boundaries"], progress=lambda _: None)
    materialize_all(models=FakeEmbeddingModels(), **run)
    good = {asset: stored_bytes(home, asset) for asset in ("embeddings", "retrieval_runs")}
    with pytest.raises(Exception, match="embeddings not written: vectors_are_unit_length would fail: .*norm deviation"):
        materialize_all(models=LongVectors(), rebuild=True, **run)
    assert stored_bytes(home, "embeddings") == good["embeddings"]
    with pytest.raises(Exception, match="retrieval_runs not written: retrieval_stamps_agree would fail: .*hashing-9"):
        materialize_all(models=WeightsChangedUnderfoot(), rebuild=True, **run)
    assert stored_bytes(home, "retrieval_runs") == good["retrieval_runs"]


def trace_rows(home: Path) -> int:
    import duckdb

    with duckdb.connect(str(home / "traces.duckdb"), read_only=True) as connection:
        return connection.sql("SELECT count(*) FROM ask_traces").fetchall()[0][0]


QUESTION = "How do I keep a list of values?"


def test_the_answer_is_printed_even_when_its_trace_cannot_be_written(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    assert cli(env, "ask", QUESTION).returncode == 0 and trace_rows(home) == 1
    # the README's own diagnosis: another process holds traces.duckdb open read-only
    reader = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True);"
                               " print('open', flush=True); sys.stdin.read()", str(home / "traces.duckdb")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "open"
        held = cli(env, "ask", QUESTION)
    finally:
        reader.communicate("")
    assert held.returncode == 0, held.stderr
    assert "Sources:" in held.stdout or "[1]" in held.stdout or "NO ANSWER" in held.stdout, held.stdout
    [warning] = held.stderr.strip().splitlines()
    assert warning.startswith("rag-assets ask: warning: the trace of this question is queued in "), warning
    assert "traces.duckdb" in warning and "lock" in warning.lower()
    assert cli(env, "ask", QUESTION).returncode == 0
    assert trace_rows(home) == 3  # the queued trace was written by the next ask, with its own
    assert not list((home / "traces.pending").glob("*.parquet"))


@pytest.mark.parametrize("arguments", [
    [""], ["   "], [b"caf\xe9 au lait?"], [QUESTION, "--k", "0"], [QUESTION, "--k", "-1"], [QUESTION, "--k", "two"],
    [QUESTION, "--cut", "nan"], [QUESTION, "--cut", "-1"], [QUESTION, "--cut", "inf"], [QUESTION, "--cut", "2.5"],
    [QUESTION, "--budget", "0"], [QUESTION, "--budget", "-5"], ["x" * 8001]],
    ids=["empty", "blank", "not-utf8", "k0", "k-1", "k-two", "cut-nan", "cut-neg", "cut-inf", "cut-2.5", "budget0",
         "budget-5", "too-long"])
def test_ask_refuses_bad_usage_in_one_line_with_exit_2(tmp_path, arguments):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    result = subprocess.run([sys.executable, "-m", "rag_assets.cli", "ask", *arguments], env=env, cwd=PROJECT,
                            capture_output=True)
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, stderr
    assert "Traceback" not in stderr and not result.stdout
    [line] = stderr.strip().splitlines()
    assert line.startswith("rag-assets ask: error: "), line
    assert not home.exists()  # nothing was opened or created


def test_oversized_evaluation_lines_are_refused_by_line_number_without_reading_them_whole(tmp_path):
    import json

    from rag_assets_tests.conftest import FIXTURES

    home = tmp_path / "home"
    needles = (FIXTURES / "tiny_needles.jsonl").read_text().splitlines()
    cases = {
        "a 50 MB line": (needles[0], needles[1], '{"id": "huge", "questions": {"plain": "' + "x" * 50_000_000 + '"}}'),
        "a long question": (needles[0], json.dumps(json.loads(needles[1]) | {"questions": {"plain": "q" * 8_001}})),
        "a long needle": (json.dumps(json.loads(needles[0]) | {"needle": "n" * 2_001}),),
    }
    expected = {"a 50 MB line": ":3: the line is longer than 262,144 characters",
                "a long question": ":2: the 'plain' question is 8,001 characters long; at most 8,000",
                "a long needle": ":1: the needle is 2,001 characters long; at most 2,000"}
    for case, lines in cases.items():
        path = tmp_path / f"{case.replace(' ', '-')}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        result = cli(tiny_home_env(home), "evaluate", *WORDLLAMA, "--eval-set", str(path))
        assert result.returncode == 1, (case, result.stderr[-2000:])
        said = one_paragraph(result, "evaluate")
        assert f"{path}{expected[case]}" in said, (case, said[:1000])


KILLER = '''
import os, signal, importlib
module, name, when = os.environ["KILL_AT"].split(":")
target = importlib.import_module(module)
original = getattr(target, name)
def kill_there(*args, **kwargs):
    if when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    result = original(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
setattr(target, name, kill_there)
'''


def killed_at(tmp_path: Path, env: dict, where: str, *args: str) -> None:
    """Runs `rag-assets evaluate` and kill -9s it at ``where`` ("module:function:before|after")."""
    hook = tmp_path / "kill-hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(KILLER)
    result = cli(env | {"PYTHONPATH": str(hook), "KILL_AT": where}, "evaluate", *WORDLLAMA, "--rebuild", *args)
    assert result.returncode == -9, (where, result.stderr[-2000:])


def dagster_runs(home: Path) -> dict[str, str]:
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        return {run.run_id: run.status.value for run in instance.get_runs()}


def evaluation_dagster_runs(home: Path) -> list[str]:
    import duckdb

    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        return [run for (run,) in connection.sql("SELECT dagster_run_id FROM evaluation_runs ORDER BY created_at")
                .fetchall()]


@pytest.mark.parametrize("where", [
    "rag_assets.assets.extraction:extract_entry:before",
    "rag_assets.assets.embeddings:write_embeddings:before",
    "rag_assets.assets.retrieval:retrieve_and_judge:before",
], ids=["extraction", "embeddings", "retrieval"])
def test_a_run_killed_with_kill_9_is_recorded_failed_by_the_next_command(tmp_path, where):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    before = dagster_runs(home)
    killed_at(tmp_path, env, where)
    [ghost] = [run for run, status in dagster_runs(home).items() if run not in before and status == "STARTED"]
    assert dagster_runs(home)[ghost] == "STARTED"  # what the UI's run list would show for ever
    following = cli(env, "evaluate", *WORDLLAMA)
    assert following.returncode == 0, following.stderr[-2000:]
    assert f"run {ghost}" in following.stdout + following.stderr and "recorded as failed" in following.stdout + \
        following.stderr
    assert dagster_runs(home)[ghost] == "FAILURE"
    assert not [run for run, status in dagster_runs(home).items() if status in ("STARTED", "STARTING", "NOT_STARTED")]


def test_a_run_killed_just_after_the_metrics_file_was_renamed_into_place_does_not_stay_current(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    [good] = evaluation_dagster_runs(home)
    killed_at(tmp_path, env, "rag_assets.lib.evaluate.results_store:publish:after")
    [_, dead] = evaluation_dagster_runs(home)  # its rows are the current result, its run is STARTED
    following = cli(env, "report")  # a reader does not judge runs: the rows are still there
    assert following.returncode == 0
    from dagster import DagsterInstance

    from rag_assets.resources import RagSettings
    from rag_assets.runner.evaluation import Runner

    said = []
    with DagsterInstance.from_config(str(home / "dagster")) as instance:  # what every command does first
        Runner(RagSettings(home=str(home)), instance, None, said.append, {}, False)
    assert dagster_runs(home)[dead] == "FAILURE"
    assert evaluation_dagster_runs(home) == [good]  # the failed run's rows are no longer current
    assert any(f"run {dead[:8]}" in line and "withdrawn" in line for line in said), said
    [kept] = home.glob("metrics.duckdb.withdrawn-*")
    assert kept.name == f"metrics.duckdb.withdrawn-{dead[:8]}"
    again = cli(env, "evaluate", *WORDLLAMA)  # the file before is the last good run's: current, or rebuilt
    assert again.returncode == 0, again.stderr[-2000:]
    assert evaluation_dagster_runs(home)[0] == good and dead not in evaluation_dagster_runs(home)


def test_the_smaller_defects_each_say_what_to_do(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    # backfill (and evaluate) of an unknown model is bad usage that creates nothing
    for command in (["backfill", "--model", "unknown"], ["evaluate", "--models", "unknown"]):
        result = cli(env, *command)
        assert result.returncode == 2 and "unknown model unknown" in one_paragraph(result, command[0])
        assert not home.exists()
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0
    # report --by with a column that does not exist is bad usage
    result = cli(env, "report", "--by", "bad")
    assert result.returncode == 2 and "choose from model" in one_paragraph(result, "report")
    # export refuses to overwrite, replaces with --force, and blames the folder it cannot write
    out = tmp_path / "exported"
    assert cli(env, "export", str(out)).returncode == 0
    written = {path.name: path.read_bytes() for path in out.iterdir()}
    (out / "wordllama__boundaries__dense.run").write_text("mine\n")
    result = cli(env, "export", str(out))
    assert result.returncode == 1
    said = one_paragraph(result, "export")
    assert "already exist" in said and "--force" in said and "nothing was written" in said
    assert (out / "wordllama__boundaries__dense.run").read_text() == "mine\n"
    assert cli(env, "export", str(out), "--force").returncode == 0
    assert {path.name: path.read_bytes() for path in out.iterdir()} == written
    result = cli(env, "export", "/sys/fs/rag-assets-export")  # /sys refuses new files and folders, even to root
    said = one_paragraph(result, "export")
    assert result.returncode == 1 and "the export folder /sys/fs/rag-assets-export must be writable" in said
    assert "RAG_ASSETS_HOME" not in said
    # a damaged partition met by ask or export names the command that rebuilds it
    halve(home / "parquet" / "embeddings" / "model=wordllama" / "strategy=boundaries" / "data.parquet")
    result = cli(env, "ask", QUESTION)
    assert result.returncode == 1
    assert "Rebuild it: rag-assets backfill --model wordllama --strategies boundaries" in one_paragraph(result, "ask")
    halve(home / "parquet" / "chunks" / "strategy=boundaries" / "data.parquet")
    result = cli(env, "export", str(tmp_path / "again"))
    assert result.returncode == 1
    assert "Rebuild it: rag-assets evaluate --rebuild --strategies boundaries" in one_paragraph(result, "export")


def test_a_model_registered_once_never_blocks_the_metrics_of_the_others(tmp_path):
    from rag_assets_tests.assets.test_automation import copy_wordllama
    from rag_assets_tests.servers import register_wordllama_copy

    home = tmp_path / "home"
    registry = register_wordllama_copy(copy_wordllama(tmp_path / "wordllama-copy"), tmp_path / "models.json")
    with_copy = tiny_home_env(home, registry)
    built = cli(with_copy, "evaluate", "--models", "wordllama", "wordllama-copy", "--strategies", "boundaries")
    assert built.returncode == 0, built.stderr[-2000:]
    without = tiny_home_env(home)  # the registry file is not set any more
    result = cli(without, "evaluate", *WORDLLAMA)
    assert result.returncode == 0, result.stderr[-3000:]
    said = [line for line in (result.stdout + result.stderr).splitlines() if "wordllama-copy" in line]
    notice = [line for line in said if "are not evaluated" in line]
    assert len(notice) == 1, said
    assert "RAG_ASSETS_MODELS_FILE" in notice[0] and "rm -r" in notice[0]
    assert f"{home}/parquet/retrieval_runs/model=wordllama-copy" in notice[0]
    report = cli(without, "report", "--format", "json")
    assert report.returncode == 0 and "wordllama-copy" not in report.stdout and "wordllama" in report.stdout
    back = cli(with_copy, "evaluate", "--models", "wordllama", "wordllama-copy", "--strategies", "boundaries")
    assert back.returncode == 0 and "wordllama-copy" in cli(with_copy, "report", "--format", "json").stdout
