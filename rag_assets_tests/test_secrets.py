"""No secret leaves in any form: a team database's password put in from ``${VARIABLE}`` (with every character
that breaks a URL), the token header and the query values of an HTTP retriever's ``url`` and
``index_version_url``, and a wrong password's failure, through `evaluate` (published to a real PostgreSQL that
checks the password), `report`, `export`, `history` and `ask`. Every file of the storage folder (Dagster's run,
event-log and index databases, its logs, Parquet, DuckDB, the evaluation page and report), the export folder
and every command's output are searched for each secret, as written and in every encoding a URL, a driver or
JSON would give it."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from rag_assets_tests.servers import PostgresServer, RetrievalService, cli, tiny_home_env

pytestmark = [pytest.mark.integration, pytest.mark.servers]

PASSWORD = "p@ss/w#rd%41?:secret-one"  # the team database's, every URL-breaking character in it
WRONG = "wr@ng/pass#secret-two"  # a password the database refuses: its failure must not show it
QUERY_SECRETS = {"pwd": "hunter2-secret-three", "jwt": "eyJhbGciOi.secret-four", "session": "sess-secret-five"}
TOKEN = "s3cret-token-six"


def forms(secret: str) -> set[str]:
    """Every way a secret may be written down: as is, percent-encoded, form-encoded, inside JSON."""
    return {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret), json.dumps(secret)[1:-1],
            urllib.parse.quote(urllib.parse.quote(secret, safe=""), safe="")}


def texts(folder: Path):
    """(path, text) for every file under ``folder``: Parquet and DuckDB as the rows they hold (their pages
    may be compressed), every other file as its bytes read as text (SQLite and logs keep text as written)."""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            yield path, json.dumps(pq.read_table(path).to_pylist(), default=str)
        elif path.name.endswith(".duckdb") and not path.name.startswith("."):
            with duckdb.connect(str(path), read_only=True) as connection:
                tables = [row[0] for row in connection.sql(
                    "SELECT table_name FROM information_schema.tables").fetchall()]
                yield path, json.dumps({t: connection.sql(f'SELECT * FROM "{t}"').fetchall() for t in tables},
                                       default=str)
        yield path, path.read_bytes().decode("utf-8", errors="replace")


def test_no_secret_is_written_or_printed_anywhere(tmp_path):
    server = PostgresServer(tmp_path / "pg", password=PASSWORD)
    service = RetrievalService(tmp_path / "uvicorn.log", token=TOKEN)
    outputs: list[str] = []
    try:
        registry = tmp_path / "retrievers.json"
        query = urllib.parse.urlencode({"k": 5, "pwd": QUERY_SECRETS["pwd"], "jwt": QUERY_SECRETS["jwt"]})
        registry.write_text(json.dumps([{
            "key": "prod", "kind": "http", "url": f"{service.url}/search?{query}",
            "headers": {"Authorization": "PROD_TOKEN"},
            "index_version_url": f"{service.url}/version?session={QUERY_SECRETS['session']}"}]))
        home = tmp_path / "home"
        url = f"postgresql://rag:${{TEAM_DB_PASSWORD}}@127.0.0.1:{server.port}/rag_assets"
        env = tiny_home_env(home) | {"RAG_ASSETS_RETRIEVERS_FILE": str(registry), "PROD_TOKEN": f"Bearer {TOKEN}",
                                     "RAG_ASSETS_PUBLISH_URL": url, "TEAM_DB_PASSWORD": PASSWORD}
        evaluated = cli(env, "evaluate", "--models", "wordllama", "--strategies", "boundaries")
        outputs.append(evaluated.stdout + evaluated.stderr)
        assert evaluated.returncode == 0, evaluated.stderr[-3000:]
        # the password, percent-encoded when it was put in, connected: the run is in the team's database
        assert "published 1 evaluation run(s) to postgresql://rag:***@127.0.0.1" in evaluated.stdout, outputs[-1][-3000:]
        import psycopg2

        with psycopg2.connect(host="127.0.0.1", port=server.port, user="rag", password=PASSWORD,
                              dbname="rag_assets") as connection, connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM rag_evaluation_runs")
            assert cursor.fetchone() == (1,)
        # a password the database refuses: one warning line, the evaluation stands, nothing shown
        (tmp_path / "answer.txt").write_text("Use vinegar [1].")
        for command in (["evaluate", "--models", "wordllama", "--strategies", "boundaries"],
                        ["ask", "How do I remove limescale from a kettle with vinegar?"]):
            refused = cli(env | {"TEAM_DB_PASSWORD": WRONG}, *command)
            outputs.append(refused.stdout + refused.stderr)
            assert refused.returncode in (0, 3), refused.stderr[-3000:]
            assert "password authentication failed" in outputs[-1] and "postgresql://rag:***@127.0.0.1" in outputs[-1]
        for command in (["report", "--paired"], ["history"], ["export", str(tmp_path / "export")],
                        ["ask", "How do I remove limescale from a kettle with vinegar?", "--verify",
                         str(tmp_path / "answer.txt")]):
            done = cli(env, *command)
            outputs.append(done.stdout + done.stderr)
            assert done.returncode in (0, 3), done.stderr[-3000:]
        assert (tmp_path / "export" / "external__prod__prod.run").exists()
    finally:
        service.stop()
        server.stop()
    secrets = {name: forms(value) for name, value in
               [("password", PASSWORD), ("wrong password", WRONG), ("token", TOKEN), *QUERY_SECRETS.items()]}
    searched = [*texts(home), *texts(tmp_path / "export"), *((Path(f"output {i}"), text) for i, text in enumerate(outputs))]
    assert any("dagster" in str(path) and path.suffix == ".db" for path, _ in searched)  # Dagster's own databases
    assert any(path.name == "index.html" for path, _ in searched)  # the evaluation page
    found = [(name, str(path)) for path, text in searched for name, written in secrets.items()
             if any(form in text for form in written)]
    assert not found, found
