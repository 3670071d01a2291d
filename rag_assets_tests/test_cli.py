import subprocess
import sys
from pathlib import Path

import pytest

import rag_assets

pytestmark = pytest.mark.integration


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "rag_assets.cli", *args], capture_output=True, text=True)


def test_version():
    result = _cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"rag-assets {rag_assets.__version__}"


def test_help_lists_commands():
    result = _cli("--help")
    assert result.returncode == 0
    for command in ("evaluate", "report", "ui"):
        assert command in result.stdout


def test_report_without_results_says_what_to_run_with_its_own_exit_status():
    for command in ("report", "history"):
        result = _cli(command)
        assert result.returncode == 4, command  # "nothing to report yet" (README: exit statuses)
        assert "rag-assets evaluate" in result.stderr


def test_a_model_or_strategy_named_twice_is_bad_usage_before_anything_runs(tmp_path, monkeypatch, capsys):
    """Today's failure was a SQLite UNIQUE error from Dagster's partitions table on a fresh home."""
    from rag_assets.cli import main

    monkeypatch.setenv("RAG_ASSETS_HOME", str(tmp_path / "home"))
    assert main(["evaluate", "--models", "wordllama", "wordllama", "--strategies", "boundaries"]) == 2
    assert capsys.readouterr().err.strip() == (
        "rag-assets evaluate: error: model wordllama named more than once; name each once")
    assert main(["backfill", "--model", "wordllama", "--strategies", "blind", "blind"]) == 2
    assert "strategy blind named more than once" in capsys.readouterr().err
    assert main(["evaluate", "--models", "no-such-model"]) == 2
    assert "unknown model no-such-model; registered:" in capsys.readouterr().err
    assert not (tmp_path / "home").exists()  # nothing was made: no run, not even the Dagster folder


def test_evaluate_ends_with_a_verdict_and_report_keeps_the_tables(tmp_path):
    from rag_assets_tests.servers import tiny_home_env

    env = tiny_home_env(tmp_path / "home")
    run = subprocess.run([sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", "wordllama",
                          "--strategies", "boundaries", "boundaries_header"], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    verdict = run.stdout[run.stdout.index("Verdict"):].strip().splitlines()
    assert len(verdict) <= 30 and "| model |" not in run.stdout  # no wall of tables
    assert verdict[0].startswith("Verdict at 1024 context tokens (cl100k_base (tiktoken); the needle is the unit")
    # (on this tiny corpus BM25, recorded under its own name, finds every needle first, on either strategy: the
    # tie goes to the lower median latency, and the verdict says so)
    assert verdict[1].startswith("  Ship bm25: boundaries") and " x bm25: " in verdict[1], verdict[1]
    assert "S@1024t " in verdict[1] and "MRR " in verdict[1]
    assert any(line.startswith("  Tied with bm25: boundaries") and "chosen for lower latency (" in line
               for line in verdict), verdict
    assert any(line.startswith("  Significant after adjustment: ") for line in verdict)
    assert any(line.startswith("Since the previous run: one evaluation run so far") for line in verdict)
    assert verdict[-1].startswith("Full tables: rag-assets report")
    page = Path(env["RAG_ASSETS_HOME"]).absolute() / "report" / "index.html"
    assert verdict[-2].startswith(f"Look: the evaluation page {page.as_uri()}") and page.exists()
    assert "Token indices sequence length" not in run.stdout + run.stderr
    # a long step reports its progress with the time left; the last report says how long it took
    assert any("embedded new texts" in line and "(done in " in line for line in run.stdout.splitlines()), run.stdout
    full = subprocess.run([sys.executable, "-m", "rag_assets.cli", "report", "--paired"], env=env, capture_output=True,
                          text=True)
    assert full.returncode == 0 and "| model | strategy | retriever |" in full.stdout and "Paired tests" in full.stdout
    assert full.stdout.strip().splitlines()[-1] == ("The evaluation page (open it in a browser; it needs no network): "
                                                    f"{page.as_uri()}")
    assert full.stdout.startswith("Verdict at 1024 context tokens")  # the report starts with the decision


def test_the_ui_started_in_the_background_stops_on_sigterm_with_its_children(tmp_path):
    """A background shell starts `rag-assets ui` with SIGINT ignored; SIGTERM (and then SIGINT) must still
    stop it and every process it started. Beside the UI it serves the storage folder's evaluation page on
    127.0.0.1 (``report_port``), and stops serving it with the UI."""
    import os
    import signal
    import time
    import urllib.request

    from rag_assets_tests.servers import free_port, session_pids, tiny_home_env

    (tmp_path / "home" / "report").mkdir(parents=True)
    (tmp_path / "home" / "report" / "index.html").write_text("<p>the evaluation page</p>")
    for stop in (signal.SIGTERM, signal.SIGINT):
        port, report_port = free_port(), free_port()
        log = (tmp_path / f"ui-{stop.name}.log").open("wb")
        process = subprocess.Popen([sys.executable, "-m", "rag_assets.cli", "ui", "--port", str(port)],
                                   env=tiny_home_env(tmp_path / "home") | {"RAG_ASSETS_REPORT_PORT": str(report_port)},
                                   stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        try:
            deadline = time.monotonic() + 180  # a guard against a hang, not a speed limit
            while time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2):
                        break
                except OSError:
                    time.sleep(1)
            assert len(session_pids(process.pid)) >= 3  # dagster dev, its webserver, daemon and code server
            with urllib.request.urlopen(f"http://127.0.0.1:{report_port}/index.html", timeout=10) as served:
                assert served.read() == b"<p>the evaluation page</p>"
            process.send_signal(stop)
            process.wait(timeout=120)  # a guard against a hang, not a speed limit
            with pytest.raises(OSError):  # the page stopped with the UI
                urllib.request.urlopen(f"http://127.0.0.1:{report_port}/index.html", timeout=5)
            deadline = time.monotonic() + 60
            while session_pids(process.pid) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert session_pids(process.pid) == [], (stop.name, session_pids(process.pid))
        finally:
            for pid in session_pids(process.pid):
                os.kill(pid, signal.SIGKILL)
            log.close()
        output = (tmp_path / f"ui-{stop.name}.log").read_text(errors="replace")
        assert "SupersessionWarning" not in output and "dg dev" not in output, output[:2000]
        assert f"rag-assets ui: the evaluation page: http://127.0.0.1:{report_port}/index.html" in output, output[:2000]


@pytest.mark.integration
@pytest.mark.parametrize("when", ["starting", "serving"])
def test_sigterm_to_the_process_group_of_ui_stops_every_process_within_the_grace(tmp_path, when):
    """A newcomer's `kill -TERM -<pgid>` (every process of the group at once, as a service manager sends it), while
    the UI starts or once it serves: the webserver, the daemon and the code servers all stop, within the grace
    docs/ui.md states (runner/supervision.py GRACE_SECONDS), with no traceback."""
    import os
    import signal
    import time
    import urllib.request

    from rag_assets.runner.supervision import GRACE_SECONDS
    from rag_assets_tests.servers import free_port, session_pids, tiny_home_env

    port = free_port()
    log_path = tmp_path / "ui.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "rag_assets.cli", "ui", "--port", str(port)],
                                   env=tiny_home_env(tmp_path / "home"), stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        try:
            deadline = time.monotonic() + (4 if when == "starting" else 180)  # a guard against a hang
            while time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2):
                        break
                except OSError:
                    time.sleep(0.5)
            assert len(session_pids(process.pid)) >= 2, session_pids(process.pid)
            os.killpg(process.pid, signal.SIGTERM)
            sent = time.monotonic()
            while session_pids(process.pid) and time.monotonic() - sent < GRACE_SECONDS + 20:
                time.sleep(0.2)
            left = session_pids(process.pid)
            assert left == [], [open(f"/proc/{pid}/cmdline").read().replace("\0", " ")[:200] for pid in left]
            assert time.monotonic() - sent <= GRACE_SECONDS + 20
            assert process.wait(timeout=30) in (0, 130)
        finally:
            for pid in session_pids(process.pid):
                os.kill(pid, signal.SIGKILL)
    output = log_path.read_text(errors="replace")
    if when == "serving":  # while starting, Dagster's code server prints the import it was interrupted in
        assert "Traceback" not in output, output[-3000:]
