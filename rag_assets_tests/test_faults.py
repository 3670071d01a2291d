"""Faults that must lose nothing and never leave a storage folder that hangs: a run killed or stopped while
it writes, stamps that disagree, a rejected evaluation set, a damaged partition, a full disk, readers and
writers of one database at once, refused inputs and documents that break parsers. Each is named, and the
last good result stays the current one."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dagster import DagsterInstance

from rag_assets.tags import DUCKDB_WRITE_POOL as POOL
from rag_assets_tests.servers import tiny_home_env

pytestmark = [pytest.mark.integration, pytest.mark.servers]

PROJECT = Path(__file__).resolve().parents[1]


def held_slots(home: Path) -> list[str]:
    """Run ids holding a slot of the DuckDB writers' pool, read from the instance as it is now."""
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        if POOL not in instance.event_log_storage.get_concurrency_keys():
            return []
        return [slot.run_id for slot in instance.event_log_storage.get_concurrency_info(POOL).claimed_slots]


def evaluate(env: dict, **options) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", "wordllama",
                             "--strategies", "boundaries", "--rebuild"], env=env, cwd=PROJECT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **options)


def test_a_run_killed_while_writing_duckdb_does_not_hold_the_writers_slot_for_ever(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    first = evaluate(env)
    for line in first.stdout:  # the progress lines, as a person sees them
        if "running evaluation_metrics" in line:
            break
    while first.poll() is None and not held_slots(home):
        time.sleep(0.02)
    assert first.poll() is None, "the metrics step ended before it could be killed"
    os.kill(first.pid, signal.SIGKILL)  # kill -9 while it holds the only DuckDB writer's slot
    first.wait()
    [dead_run] = held_slots(home)

    # the next evaluation frees the dead run's slot, says so, and completes (it waited for ever before)
    second = evaluate(env)
    output, _ = second.communicate(timeout=900)  # a guard against a hang, not a speed limit
    assert second.returncode == 0, output[-3000:]
    assert f"released the DuckDB writers' slot held by run {dead_run}" in output
    assert held_slots(home) == []
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        assert instance.get_run_by_id(dead_run).is_failure  # the killed run is recorded as failed


def test_a_run_whose_stamps_disagree_records_nothing_and_the_latest_result_stays_the_good_one(
        tmp_path, tiny_corpus, tiny_needles):
    """Two strategies evaluated; then one document added and one strategy rebuilt: the other strategy's
    partition is of the old snapshot, so the metrics must refuse the mix before writing anything."""
    import shutil

    import duckdb
    import pytest

    from rag_assets.resources import RagSettings
    from rag_assets.runner.evaluation import materialize_all
    from rag_assets_tests.fakes import FakeEmbeddingModels

    corpus = tmp_path / "corpus"
    shutil.copytree(tiny_corpus, corpus)
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    instance, models = DagsterInstance.ephemeral(), FakeEmbeddingModels()
    run = dict(settings=settings, instance=instance, models=models, model_keys=["all-MiniLM-L6-v2"],
               progress=lambda _: None)
    materialize_all(strategies=["boundaries", "blind"], **run)
    database = Path(settings.home) / "metrics.duckdb"
    with duckdb.connect(str(database), read_only=True) as connection:
        [(good_run, snapshots)] = connection.sql(
            "SELECT run_id, count(DISTINCT snapshot_id) FROM latest_results GROUP BY run_id").fetchall()

    (corpus / "added.md").write_text("# Added\n\nA new page about sets and frozensets in Python.\n")
    with pytest.raises(Exception, match="nothing was recorded") as refused:
        materialize_all(strategies=["boundaries"], **run)
    assert "snapshot" in str(refused.value)
    with duckdb.connect(str(database), read_only=True) as connection:
        assert connection.sql("SELECT count(*) FROM evaluation_runs").fetchall() == [(1,)]
        assert connection.sql("SELECT DISTINCT run_id FROM latest_results").fetchall() == [(good_run,)]
    assert snapshots == 1


def test_a_rejected_evaluation_set_does_not_replace_the_good_one(tmp_path, tiny_corpus, tiny_needles):
    import json

    import pytest

    from rag_assets.lib.store import paths
    from rag_assets.resources import RagSettings
    from rag_assets.runner.evaluation import materialize_all
    from rag_assets_tests.fakes import FakeEmbeddingModels

    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    instance, models = DagsterInstance.ephemeral(), FakeEmbeddingModels()
    run = dict(instance=instance, models=models, model_keys=["all-MiniLM-L6-v2"], strategies=["boundaries"],
               progress=lambda _: None)
    materialize_all(settings=settings, **run)
    stored = paths.partition_path(Path(settings.home), "eval_set")
    good = stored.read_bytes()

    bad = tmp_path / "bad.jsonl"
    lines = tiny_needles.read_text().splitlines()
    needle = json.loads(lines[0]) | {"needle": "This sentence is nowhere in the corpus."}
    bad.write_text("\n".join([json.dumps(needle), *lines[1:]]) + "\n")
    with pytest.raises(Exception) as refused:
        materialize_all(settings=RagSettings(home=settings.home, corpus_dir=settings.corpus_dir, eval_set=str(bad),
                                             out_of_domain=settings.out_of_domain), **run)
    assert stored.read_bytes() == good  # the good set is still the one stored
    assert needle["id"] in str(refused.value) and "not written" in str(refused.value)


def _fake_home(tmp_path, tiny_corpus, tiny_needles, strategies=("boundaries", "blind")):
    """An evaluated home built with the fake embedder: (settings, the keyword arguments of another run)."""
    from rag_assets.resources import RagSettings
    from rag_assets.runner.evaluation import materialize_all
    from rag_assets_tests.fakes import FakeEmbeddingModels

    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    run = dict(settings=settings, instance=DagsterInstance.ephemeral(), models=FakeEmbeddingModels(),
               model_keys=["all-MiniLM-L6-v2"], progress=lambda _: None)
    materialize_all(strategies=list(strategies), **run)
    return settings, run


def _recorded_runs(home: Path) -> int:
    import duckdb

    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        return connection.sql("SELECT count(*) FROM evaluation_runs").fetchall()[0][0]


def test_a_damaged_partition_of_another_strategy_is_named_with_the_command_that_rebuilds_it(
        tmp_path, tiny_corpus, tiny_needles):
    import pytest

    from rag_assets.lib.store import paths
    from rag_assets.runner.evaluation import backfill_model, materialize_all
    from rag_assets.runner.failures import RunFailed

    settings, run = _fake_home(tmp_path, tiny_corpus, tiny_needles)
    home = Path(settings.home)
    damaged = paths.partition_path(home, "retrieval_runs", [("model", "all-MiniLM-L6-v2"), ("strategy", "blind")])
    damaged.write_bytes(damaged.read_bytes()[:100])  # truncated
    with pytest.raises(RunFailed) as failed:  # the metrics read every materialised partition
        materialize_all(strategies=["boundaries"], rebuild=True, **run)
    message = str(failed.value)
    assert str(damaged) in message and "damaged" in message
    assert "rag-assets backfill --model all-MiniLM-L6-v2 --strategies blind" in message
    assert _recorded_runs(home) == 1  # nothing of the failed run was recorded
    # the named command repairs it
    backfill_model(settings, run["instance"], "all-MiniLM-L6-v2", models=run["models"], strategies=["blind"],
                   progress=lambda _: None)
    assert _recorded_runs(home) == 2


def test_a_full_disk_names_the_path_leaves_no_half_file_and_records_nothing(
        tmp_path, tiny_corpus, tiny_needles, monkeypatch):
    """ENOSPC injected at the writers (a tmpfs cannot be mounted here): the Parquet writer after it wrote
    part of a file, and DuckDB in the middle of recording a run."""
    import errno

    import pyarrow.parquet as pq
    import pytest

    from rag_assets.lib.evaluate import results_store
    from rag_assets.lib.store import paths
    from rag_assets.runner.evaluation import materialize_all
    from rag_assets.runner.failures import RunFailed

    settings, run = _fake_home(tmp_path, tiny_corpus, tiny_needles, strategies=["boundaries"])
    home = Path(settings.home)
    stored = paths.partition_path(home, "retrieval_runs", [("model", "all-MiniLM-L6-v2"), ("strategy", "boundaries")])
    good, database = stored.read_bytes(), (home / "metrics.duckdb").read_bytes()
    write_table = pq.write_table

    def full_disk(table, where, *args, **kwargs):
        if "retrieval_runs" in str(where):
            Path(where).write_bytes(b"PAR1 half a file")
            raise OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device")
        return write_table(table, where, *args, **kwargs)

    monkeypatch.setattr(pq, "write_table", full_disk)
    with pytest.raises(RunFailed, match="no space left on device writing") as failed:
        materialize_all(strategies=["boundaries"], rebuild=True, **run)
    assert str(stored) in str(failed.value) and "Traceback" not in str(failed.value)
    assert stored.read_bytes() == good  # the last good file stays
    assert not [p for p in home.rglob("*.tmp")]  # no half file is left behind
    monkeypatch.setattr(pq, "write_table", write_table)

    write_results = results_store.write_results

    def full_disk_in_duckdb(connection, *args, **kwargs):
        write_results(connection, *args, **kwargs)  # the run's rows are in, then the disk fills
        raise __import__("duckdb").IOException("Could not write file: No space left on device")

    monkeypatch.setattr(results_store, "write_results", full_disk_in_duckdb)
    with pytest.raises(RunFailed, match="no space left on device writing") as failed:
        materialize_all(strategies=["boundaries"], rebuild=True, **run)
    assert "metrics.duckdb" in str(failed.value)
    assert (home / "metrics.duckdb").read_bytes() == database and _recorded_runs(home) == 1  # nothing recorded
    assert not [p for p in home.iterdir() if p.name.startswith(".metrics.duckdb")]


def test_a_reader_holding_the_database_open_never_makes_the_writer_fail(tmp_path, tiny_corpus, tiny_needles):
    from rag_assets.runner.evaluation import Runner

    settings, run = _fake_home(tmp_path, tiny_corpus, tiny_needles, strategies=["boundaries"])
    home = Path(settings.home)
    reader = subprocess.Popen(  # another process reads, as `rag-assets report` or the UI would, and keeps it open
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
         "print(c.sql('SELECT count(*) FROM evaluation_runs').fetchall()[0][0], flush=True); sys.stdin.read(); "
         "print(c.sql('SELECT count(*) FROM evaluation_runs').fetchall()[0][0], flush=True)",
         str(home / "metrics.duckdb")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "1"
        runner = Runner(settings, run["instance"], run["models"], progress=lambda _: None)
        runner.run("evaluation_metrics")  # it failed on DuckDB's lock before
        assert _recorded_runs(home) == 2
        output, _ = reader.communicate("", timeout=60)
        assert output.strip() == "1"  # the reader kept a consistent view of the file it opened
    finally:
        reader.kill()


def test_a_live_writer_is_waited_for_a_bounded_time_naming_the_run_that_holds_the_slot(
        tmp_path, tiny_corpus, tiny_needles, monkeypatch):
    import pytest

    from rag_assets.runner.evaluation import Runner
    from rag_assets.runner.writers_slot import SlotBusy
    from rag_assets.tags import HOST_TAG, PID_TAG

    settings, run = _fake_home(tmp_path, tiny_corpus, tiny_needles, strategies=["boundaries"])
    instance = run["instance"]
    import socket

    from dagster import DagsterRun

    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "rag-assets", "evaluate"])
    holder = instance.add_run(DagsterRun(job_name="evaluation_metrics", run_id="a" * 36, tags={
        PID_TAG: str(live.pid), HOST_TAG: socket.gethostname()}))  # a live `rag-assets` process of this machine
    instance.event_log_storage.set_concurrency_slots(POOL, 1)
    assert instance.event_log_storage.claim_concurrency_slot(POOL, holder.run_id, "retrieval_metrics").is_claimed
    monkeypatch.setenv("RAG_ASSETS_SLOT_WAIT", "2")
    said = []
    runner = Runner(settings, instance, run["models"], progress=said.append)
    try:
        with pytest.raises(SlotBusy) as busy:
            runner.run("evaluation_metrics")
    finally:
        live.kill()
        live.wait()
    assert holder.run_id in str(busy.value) and f"process {live.pid}" in str(busy.value)
    assert "kill" in str(busy.value)
    assert any(line.startswith("waiting (at most 2 s") and holder.run_id in line for line in said)
    instance.event_log_storage.free_concurrency_slots_for_run(holder.run_id)
    runner.run("evaluation_metrics")  # once it is free, the writer goes on
    assert _recorded_runs(Path(settings.home)) == 2


def _cli(env: dict, *args: str, cwd: Path = PROJECT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rag_assets.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_every_refused_input_is_one_paragraph_that_says_what_is_wrong_and_debug_shows_the_traceback(tmp_path):
    env = tiny_home_env(tmp_path / "home")
    run = ["evaluate", "--models", "wordllama", "--strategies", "boundaries"]
    not_beir = tmp_path / "not-beir"
    not_beir.mkdir()
    (not_beir / "notes.txt").write_text("not a BEIR folder\n")
    broken = tmp_path / "broken-corpus"
    broken.mkdir()
    (broken / "a.pdf").write_bytes(b"\x00\x01\x02 not a pdf")
    (broken / "b.html").write_bytes(b"\xff\xfe\x00\x00binary")
    cases = {
        "missing corpus": (run + ["--corpus", str(tmp_path / "nowhere")], [f"corpus folder {tmp_path / 'nowhere'} "
                                                                           "does not exist"]),
        "not a BEIR folder": (run + ["--eval-set", str(not_beir)], [f"{not_beir} is a folder but not a BEIR folder",
                                                                     "corpus.jsonl"]),
        "--beir-split with needles": (run + ["--beir-split", "dev"], ["--beir-split dev was given", "needle file"]),
        "every document failed": (run + ["--corpus", str(broken)], ["every one of the 2 documents", "a.pdf: corrupt PDF",
                                                                    "b.html: binary content"]),
    }
    for case, (args, expected) in cases.items():
        result = _cli(env, *args)
        assert result.returncode == 1, (case, result.stderr[-2000:])
        assert "Traceback" not in result.stdout + result.stderr, case
        [paragraph] = result.stderr.strip().splitlines()  # one paragraph, on one line
        assert paragraph.startswith("rag-assets evaluate: ") and "--debug" in paragraph, case
        for text in expected:
            assert text in paragraph, (case, paragraph)
    # a storage folder that cannot be written (/sys refuses new folders, even to root)
    read_only = _cli({**env, "RAG_ASSETS_HOME": "/sys/rag-assets-home"}, *run)
    assert read_only.returncode == 1 and "Traceback" not in read_only.stderr
    [paragraph] = read_only.stderr.strip().splitlines()
    assert "cannot write '/sys/rag-assets-home'" in paragraph and "must be writable" in paragraph
    debug = _cli(env, "--debug", *cases["missing corpus"][0])
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "CorpusError" in debug.stderr


def test_sigterm_stops_a_run_cleanly_and_the_next_one_goes_on(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    first = evaluate(env)
    for line in first.stdout:
        if "running model_partition" in line:
            break
    time.sleep(1.0)
    first.terminate()  # SIGTERM, as a service manager or `kill` sends
    output, _ = first.communicate(timeout=300)  # a guard against a hang, not a speed limit
    assert first.returncode == 130, output[-3000:]
    assert "interrupted" in output and "Traceback" not in output
    assert held_slots(home) == []
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        assert not [run for run in instance.get_runs() if not run.is_finished]  # no run is left "started"
    second = evaluate(env)
    output, _ = second.communicate(timeout=900)
    assert second.returncode == 0, output[-3000:]


def _hostile_corpus(folder: Path, tiny_corpus: Path) -> None:
    """The tiny corpus plus what breaks walkers and parsers: 100,000 nested elements, a name that is not
    UTF-8, a folder 2,000 levels deep (with a document at the bottom), symbolic link loops, a broken link."""
    import shutil

    shutil.copytree(tiny_corpus, folder)
    (folder / "deep.html").write_text("<html><body>" + "<div>" * 100_000 + "<p>Deep.</p>" + "</div>" * 100_000
                                      + "</body></html>")
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.md"), "wb") as handle:
        handle.write(b"# A Latin-1 name\n\nA document whose file name is not UTF-8.\n")
    (folder / "loop").mkdir()
    os.symlink("..", folder / "loop" / "up")
    os.symlink("self", folder / "self")
    os.symlink("missing.md", folder / "broken.md")
    descriptor = os.open(folder, os.O_RDONLY)
    for _ in range(2000):  # by descriptor: the path grows close to PATH_MAX
        os.mkdir("d", dir_fd=descriptor)
        inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
        os.close(descriptor)
        descriptor = inner
    with open(os.open("bottom.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=descriptor), "w") as handle:
        handle.write("# Bottom\n\nThe document at the bottom of a very deep folder.\n")
    os.close(descriptor)


def test_documents_that_break_walkers_and_parsers_fail_alone_with_their_reason(tiny_corpus, tiny_needles):
    import tempfile

    from dagster import AssetKey, AssetRecordsFilter

    from rag_assets.lib.store import paths
    from rag_assets.resources import RagSettings
    from rag_assets.runner.evaluation import materialize_all
    from rag_assets_tests.fakes import FakeEmbeddingModels

    root = Path(tempfile.mkdtemp(prefix="c", dir="/tmp"))  # a short prefix: 2,000 folders deep nears PATH_MAX
    try:
        corpus = root / "c"
        _hostile_corpus(corpus, tiny_corpus)
        settings = RagSettings(home=str(root / "home"), corpus_dir=str(corpus), eval_set=str(tiny_needles),
                               out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
        instance = DagsterInstance.ephemeral()
        outcome = materialize_all(settings, instance, models=FakeEmbeddingModels(), model_keys=["all-MiniLM-L6-v2"],
                                  strategies=["boundaries"], progress=lambda _: None)
        [record] = instance.fetch_materializations(AssetRecordsFilter(asset_key=AssetKey("corpus_snapshot")),
                                                   limit=1).records
        skipped = record.asset_materialization.metadata["skipped"].value
        assert skipped == {
            "broken.md": "broken symbolic link (missing.md)",
            "caf\\xe9.md": "the file name is not valid UTF-8: rename it to include it",
            "loop/up": "symbolic link loop: leads back to a folder it is in (..)",
            "self": "symbolic link loop (self)",
        }
        assert "nests elements more than 5,000 deep" in outcome.extraction["failed"]["deep.html"]
        import pyarrow.parquet as pq

        texts = {row["doc_id"]: row for row in pq.read_table(paths.partition_path(Path(settings.home),
                                                                                  "extracted_text")).to_pylist()}
        bottom = "/".join(["d"] * 2000) + "/bottom.md"
        assert texts[bottom]["status"] == "ok" and "bottom of a very deep folder" in texts[bottom]["text"]
        assert outcome.extraction["documents_ok"] == 4 and outcome.extraction["documents_failed"] == 1
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=True)  # shutil.rmtree recurses, 2,000 levels are too many


def test_two_evaluations_of_one_home_at_once_both_complete_and_both_are_recorded(tmp_path):
    home = tmp_path / "home"
    env = tiny_home_env(home)
    runs = [evaluate(env), evaluate(env)]  # two processes, one instance, one DuckDB file
    outputs = [run.communicate(timeout=900)[0] for run in runs]  # a guard against a hang, not a speed limit
    for run, output in zip(runs, outputs):
        assert run.returncode == 0, output[-3000:]
        assert "Traceback" not in output
    assert _recorded_runs(home) == 2 and held_slots(home) == []


def test_report_refuses_a_latest_run_that_mixes_builds_recorded_by_an_older_version(
        tmp_path, tiny_corpus, tiny_needles):
    import duckdb

    settings, _ = _fake_home(tmp_path, tiny_corpus, tiny_needles)
    home = Path(settings.home)
    env = {**os.environ, "RAG_ASSETS_HOME": str(home)}
    good = _cli(env, "report")
    assert good.returncode == 0, good.stderr
    with duckdb.connect(str(home / "metrics.duckdb")) as connection:  # as a version without the stamp check wrote it
        connection.execute("UPDATE retrieval_results SET snapshot_id = 'older-snapshot' WHERE strategy = 'blind'")
    refused = _cli(env, "report")
    assert refused.returncode == 1 and refused.stdout == ""
    assert "mixes builds (snapshot_id " in refused.stderr and "older-snapshot" in refused.stderr
    assert "rag-assets evaluate --rebuild" in refused.stderr
