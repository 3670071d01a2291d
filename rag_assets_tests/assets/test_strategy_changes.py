"""Strategies of a strategies file through the graph: each gets its partitions, changing one strategy's definition
or upgrading its splitter library stales exactly its partitions (Dagster's own status), and a splitter that fails
fails its strategy alone."""

import json

import pytest
from dagster import DagsterInstance

from rag_assets.partitions import model_strategy_key
from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import Runner, materialize_all
from rag_assets_tests.dagster_status import StaleStatus, stale_status

pytestmark = pytest.mark.integration

ENTRIES = [
    {"name": "lc", "kind": "langchain", "splitter": "RecursiveCharacterTextSplitter", "unit": "tokens", "size": 128,
     "overlap": 16},
    {"name": "bh", "header": True, "unit": "tokens", "size": [64, 128]},
]
RUN = ["boundaries", "lc", "bh-64t-o0", "bh-128t-o0"]


def write(path, entries):
    path.write_text(json.dumps(entries), encoding="utf-8")


@pytest.fixture
def strategies_file(tmp_path, monkeypatch):
    path = tmp_path / "strategies.json"
    write(path, ENTRIES)
    monkeypatch.setenv("RAG_ASSETS_STRATEGIES_FILE", str(path))
    return path


def settings_for(tmp_path, tiny_corpus, tiny_needles, strategies_file):
    return RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                       out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"),
                       strategies_file=str(strategies_file))


def statuses(instance):
    return {strategy: stale_status(instance, "chunks", strategy) for strategy in RUN}


def test_a_changed_definition_or_library_stales_exactly_its_strategys_partitions(
        tmp_path, tiny_corpus, tiny_needles, strategies_file, monkeypatch):
    settings = settings_for(tmp_path, tiny_corpus, tiny_needles, strategies_file)
    instance = DagsterInstance.ephemeral()
    quiet = lambda _: None  # noqa: E731
    materialize_all(settings, instance, model_keys=["wordllama"], strategies=RUN, progress=quiet)
    assert set(statuses(instance).values()) == {StaleStatus.FRESH}

    runner = Runner(settings, instance, progress=quiet)
    write(strategies_file, [ENTRIES[0], {**ENTRIES[1], "header": False}])  # one parameter of one sweep changed
    runner.observe_inputs(["wordllama"])
    assert statuses(instance) == {"boundaries": StaleStatus.FRESH, "lc": StaleStatus.FRESH,
                                  "bh-64t-o0": StaleStatus.STALE, "bh-128t-o0": StaleStatus.STALE}
    # Dagster does not carry a partition's staleness across the strategy -> model x strategy mapping; what was
    # chunked again is new data there, so those partitions are rebuilt by the next evaluate
    assert stale_status(instance, "embeddings", model_strategy_key("wordllama", "lc")) == StaleStatus.FRESH

    materialize_all(settings, instance, model_keys=["wordllama"], strategies=RUN, progress=quiet)
    assert set(statuses(instance).values()) == {StaleStatus.FRESH}
    from rag_assets.lib.ingest import splitters

    installed = splitters.version
    monkeypatch.setattr(splitters, "version", lambda name: "9.9.9" if name == "langchain-text-splitters"
                        else installed(name))  # LangChain upgraded
    runner.observe_inputs(["wordllama"])
    assert statuses(instance) == {"boundaries": StaleStatus.FRESH, "lc": StaleStatus.STALE,
                                  "bh-64t-o0": StaleStatus.FRESH, "bh-128t-o0": StaleStatus.FRESH}


def test_a_splitter_that_fails_fails_its_strategy_alone_in_one_line(
        tmp_path, tiny_corpus, tiny_needles, strategies_file):
    write(strategies_file, [*ENTRIES, {"name": "broken", "kind": "python", "splitter": "no_such_module:split"}])
    settings = settings_for(tmp_path, tiny_corpus, tiny_needles, strategies_file)
    instance = DagsterInstance.ephemeral()
    said = []
    outcome = materialize_all(settings, instance, model_keys=["wordllama"], strategies=["lc", "broken", "boundaries"],
                              progress=said.append)
    [warning] = [line for line in said if line.startswith("warning: ") and "broken" in line]
    assert "strategy 'broken': cannot import 'no_such_module:split'" in warning and "\n" not in warning
    assert "the other strategies go on" in warning
    assert outcome.partitions == ["wordllama x lc", "wordllama x boundaries"]
    import duckdb

    from rag_assets.lib.store.paths import duckdb_path

    with duckdb.connect(str(duckdb_path(tmp_path / "home")), read_only=True) as connection:
        strategies = {row[0] for row in connection.sql("SELECT DISTINCT strategy FROM query_measures").fetchall()}
    assert strategies == {"lc", "boundaries"}
