"""`rag-assets export --format trec`: the stored runs as TREC run files and qrels, read back with
ir_measures, give the figures of our metrics table (needle queries by chunk, BEIR queries by document)."""

import duckdb
import ir_measures
import pytest
from dagster import DagsterInstance
from ir_measures import RR, R, Success, nDCG

from rag_assets.cli import main
from rag_assets.lib.evaluate.measures import comparison
from rag_assets.resources import EmbeddingModels, RagSettings
from rag_assets.runner.evaluation import materialize_all
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration

MEASURES = {**{f"success_at_{k}": Success @ k for k in (1, 4, 8, 20)},
            **{f"recall_at_{k}": R @ k for k in (1, 4, 8, 20)}, "mrr": RR, "ndcg_at_10": nDCG @ 10}


def _check_export(home, out, monkeypatch, capsys, measures=MEASURES) -> int:
    monkeypatch.setenv("RAG_ASSETS_HOME", str(home))
    assert main(["export", "--format", "trec", str(out)]) == 0
    capsys.readouterr()
    with duckdb.connect(str(home / "metrics.duckdb"), read_only=True) as connection:
        ours = {(r["model"], r["strategy"], r["retriever"]): r for r in comparison(connection).to_pylist()}
    for (model, strategy, retriever), expected in ours.items():
        name = out / f"{model}__{strategy}__{retriever}"
        qrels = list(ir_measures.read_trec_qrels(str(name) + ".qrels"))
        run = list(ir_measures.read_trec_run(str(name) + ".run"))
        theirs = ir_measures.calc_aggregate(list(measures.values()), qrels, run)
        for column, measure in measures.items():
            assert theirs[measure] == pytest.approx(expected[column], abs=1e-9), (model, strategy, retriever, column)
    return len(ours)


def test_needle_runs_exported_to_trec_agree_with_our_metrics(tmp_path, tiny_corpus, tiny_needles, monkeypatch, capsys):
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(tiny_corpus), eval_set=str(tiny_needles),
                           out_of_domain=str(tiny_needles.parent / "tiny_out_of_domain.jsonl"))
    materialize_all(settings, DagsterInstance.ephemeral(), models=EmbeddingModels(), model_keys=["wordllama"],
                    strategies=["blind", "boundaries_header"], progress=lambda _: None)
    assert _check_export(tmp_path / "home", tmp_path / "trec", monkeypatch, capsys) == 2 * 5


def test_beir_runs_are_exported_by_document(tmp_path, tiny_corpus, monkeypatch, capsys):
    beir = tiny_corpus.parent / "beir_tiny"
    settings = RagSettings(home=str(tmp_path / "home"), corpus_dir=str(beir), eval_set=str(beir), out_of_domain="")
    materialize_all(settings, DagsterInstance.ephemeral(), models=FakeEmbeddingModels(),
                    model_keys=["all-MiniLM-L6-v2"], strategies=["boundaries"], progress=lambda _: None)
    # evidence queries are answered by any one of their sentences: for them recall@k is success@k, while a
    # TREC tool counts each holding chunk as an item; success, MRR and nDCG agree over all queries
    judged_alike = {c: m for c, m in MEASURES.items() if not c.startswith("recall")}
    assert _check_export(tmp_path / "home", tmp_path / "trec", monkeypatch, capsys, judged_alike) == 5
    run = (tmp_path / "trec" / "all-MiniLM-L6-v2__boundaries__dense.run").read_text().splitlines()
    document_lines = [line for line in run if line.split()[0] == "q3"]
    assert len({line.split()[2] for line in document_lines}) == len(document_lines)  # each document once
    # the true recall of document queries (q3 has two relevant documents) agrees too
    qrels = [q for q in ir_measures.read_trec_qrels(str(tmp_path / "trec" / "all-MiniLM-L6-v2__boundaries__dense.qrels"))
             if ":" not in q.query_id]
    scored = [d for d in ir_measures.read_trec_run(str(tmp_path / "trec" / "all-MiniLM-L6-v2__boundaries__dense.run"))
              if ":" not in d.query_id]
    with duckdb.connect(str(tmp_path / "home" / "metrics.duckdb"), read_only=True) as connection:
        ours = connection.sql("SELECT avg(found_at_1), avg(found_at_4) FROM query_measures WHERE query_kind = "
                              "'document' AND retriever = 'dense'").fetchall()[0]
    theirs = ir_measures.calc_aggregate([R @ 1, R @ 4], qrels, scored)
    assert (theirs[R @ 1], theirs[R @ 4]) == pytest.approx(ours, abs=1e-9)
