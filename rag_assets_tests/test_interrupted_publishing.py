"""SIGTERM or Ctrl-C sent to the whole process group while `evaluate` publishes to the team's PostgreSQL
(connecting, inside the transaction, after it): one line, exit 130, never a SQLAlchemy traceback; the
next evaluate publishes every run once."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rag_assets_tests.servers import PROJECT, WORDLLAMA, PostgresServer, cli, tiny_home_env

pytestmark = [pytest.mark.integration]

GROUP_KILLER = '''
import os, signal, importlib, threading, time
module, name, when = os.environ["KILL_AT"].split(":")
sent = getattr(signal, os.environ["KILL_SIGNAL"])
target = importlib.import_module(module)
original = getattr(target, name)
def kill_there(*args, **kwargs):
    if when.startswith("after-"):  # while it runs, in the middle of whatever it is doing then
        threading.Timer(float(when[len("after-"):]), os.killpg, (os.getpgid(0), sent)).start()
    if when == "before":
        os.killpg(os.getpgid(0), sent)  # the whole group, as a terminal or a service manager sends it
        time.sleep(1)
    result = original(*args, **kwargs)
    if when == "after":
        os.killpg(os.getpgid(0), sent)
        time.sleep(1)
    return result
setattr(target, name, kill_there)
if when.startswith("after-"):  # each table written slowly: the signal lands while the run is being published
    write = target._write
    def slow_write(*args, **kwargs):
        time.sleep(0.25)
        return write(*args, **kwargs)
    target._write = slow_write
'''


@pytest.fixture(scope="module")
def team_database(tmp_path_factory):
    server = PostgresServer(tmp_path_factory.mktemp("pg"))
    yield server
    server.stop()


def published_runs(url: str, schema_prefix: str = "rag_") -> list[str]:
    import sqlalchemy as sa

    from rag_assets.lib.store.publishing import engine_url

    engine = sa.create_engine(engine_url(url))
    try:
        with engine.connect() as connection:
            return [row[0] for row in connection.execute(sa.text(f"SELECT run_id FROM {schema_prefix}evaluation_runs"))]
    finally:
        engine.dispose()


PUBLISHING = "rag_assets.lib.store.publishing"
CASES = [(f"{PUBLISHING}:{where}", "SIGTERM", "in_process") for where in (
    "published_runs:before", "_write:before", "_write:after", "publish:after", "publish:after-0.05",
    "publish:after-0.3", "publish:after-0.6")] + [
    (f"{PUBLISHING}:_write:before", "SIGINT", "in_process"), (f"{PUBLISHING}:publish:after-0.3", "SIGINT", "in_process"),
    (f"{PUBLISHING}:_write:before", "SIGTERM", "multiprocess"),
    (f"{PUBLISHING}:publish:after-0.3", "SIGTERM", "multiprocess")]


@pytest.mark.parametrize(("where", "sent", "executor"), CASES,
                         ids=[f"{sent}-{where.split(':', 1)[1]}-{executor}" for where, sent, executor in CASES])
def test_a_signal_to_the_group_while_publishing_is_one_line_and_the_next_run_publishes_once(
        tmp_path, team_database, where, sent, executor):
    home = tmp_path / "home"
    prefix = f"t{abs(hash((where, sent, executor))) % 10**8}_"
    env = tiny_home_env(home) | {"RAG_ASSETS_PUBLISH_URL": team_database.url, "RAG_ASSETS_PUBLISH_TABLE_PREFIX": prefix,
                                 "RAG_ASSETS_EXECUTOR": executor}
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(GROUP_KILLER)
    stopped = subprocess.run([sys.executable, "-m", "rag_assets.cli", "evaluate", *WORDLLAMA],
                             env=env | {"PYTHONPATH": str(hook), "KILL_AT": where, "KILL_SIGNAL": sent}, cwd=PROJECT,
                             capture_output=True, text=True, timeout=600, start_new_session=True)
    said = stopped.stdout + stopped.stderr
    assert stopped.returncode == 130, (stopped.returncode, said[-4000:])
    assert "Traceback" not in said and "sqlalchemy" not in said.lower(), said[-4000:]
    [line] = [line for line in stopped.stderr.strip().splitlines() if "interrupted" in line]
    assert line.startswith("rag-assets evaluate: interrupted"), line
    again = cli(env, "evaluate", *WORDLLAMA)
    assert again.returncode == 0, again.stderr[-3000:]
    runs = published_runs(team_database.url, prefix)
    assert runs and len(runs) == len(set(runs)), runs
    assert cli(env, "evaluate", *WORDLLAMA).returncode == 0 and sorted(published_runs(team_database.url, prefix)) == sorted(runs)
