"""The whole graph, materialised through Dagster on a tiny corpus, with the real embedding model."""

import duckdb
import pyarrow.parquet as pq
import pytest
from dagster import DagsterInstance, materialize

from rag_assets.definitions import ASSETS
from rag_assets.lib.embed.models import BUILT_IN as MODELS
from rag_assets.lib.evaluate.measures import comparison
from rag_assets.lib.ingest.chunking import STRATEGIES
from rag_assets.lib.store import paths
from rag_assets.resources import EmbeddingModels, ParquetIOManager, RagSettings
from rag_assets.runner.evaluation import materialize_all
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration


def _settings(tmp_path, corpus, needles) -> RagSettings:
    return RagSettings(home=str(tmp_path / "home"), corpus_dir=str(corpus), eval_set=str(needles),
                       out_of_domain=str(needles.parent / "tiny_out_of_domain.jsonl"))


def test_whole_graph_with_the_real_model(tmp_path, tiny_corpus, tiny_needles):
    settings = _settings(tmp_path, tiny_corpus, tiny_needles)
    instance = DagsterInstance.ephemeral()
    materialize_all(settings, instance, models=EmbeddingModels(), progress=lambda _: None)
    # the runs list tells what each run was: named jobs, tagged with the command, models and strategies
    runs = instance.get_runs()
    assert {run.job_name for run in runs} == {"observe_inputs", "evaluation_inputs", "chunking", "model_partition",
                                              "evaluation_metrics"}
    assert all(run.tags["rag_assets/trigger"] == "cli" and run.tags["rag_assets/command"] == "evaluate"
               and run.tags["rag_assets/models"] == ",".join(MODELS)
               and run.tags["rag_assets/strategies"] == ",".join(STRATEGIES) for run in runs)
    assert len([run for run in runs if run.job_name == "model_partition"]) == len(MODELS) * len(STRATEGIES)

    with duckdb.connect(str(settings.duckdb_path), read_only=True) as connection:
        rows = connection.sql(
            "SELECT model, strategy, retriever, count(*) AS n, count(hit_rank) AS hits "
            "FROM retrieval_results WHERE query_kind = 'needle' AND retriever = 'dense' GROUP BY ALL ORDER BY model, strategy"
        ).fetchall()
        # 3 needles x 2 phrasings = 6 queries per strategy; every needle of this tiny corpus is
        # retrievable within the top 25 (each strategy has fewer than 25 chunks here)
        assert rows == [(model, strategy, "dense", 6, 6) for model in sorted(MODELS) for strategy in sorted(STRATEGIES)]
        # the two out-of-domain queries are kept, with nothing to find, for every strategy
        assert connection.sql("SELECT count(*), count(hit_rank) FROM retrieval_results "
                              "WHERE query_kind = 'out_of_domain' AND retriever = 'dense'").fetchall() == [
            (2 * len(STRATEGIES) * len(MODELS), 0)]
        # every retriever but the unconfigured cross encoder answers every query
        assert connection.sql("SELECT retriever, count(*) FROM retrieval_results GROUP BY 1 ORDER BY 1").fetchall() == [
            (name, 8 * len(STRATEGIES) * len(MODELS)) for name in ("ann", "bm25", "dense", "hybrid",
                                                                    "late_interaction")]
        # the descaling question, in the documentation's words, finds its needle first
        rank = connection.sql(
            "SELECT hit_rank FROM retrieval_results WHERE query_id = 'k1:doc' AND strategy = 'boundaries_header' "
            "AND model = 'all-MiniLM-L6-v2' AND retriever = 'dense'"
        ).fetchall()
        assert rank == [(1,)]
        stamps = connection.sql("SELECT DISTINCT model, dimension FROM retrieval_results ORDER BY model").fetchall()
        assert stamps == [("all-MiniLM-L6-v2", 384), ("paraphrase-MiniLM-L3-v2", 384), ("wordllama", 256)]
        metrics = connection.sql("SELECT * FROM metrics ORDER BY strategy, phrasing").to_arrow_table().to_pylist()
        assert len(metrics) == 2 * len(STRATEGIES) * len(MODELS) * 5 and all(m["queries"] == 3 for m in metrics)
        assert all(m["success_at_20"] == 1.0 for m in metrics if m["retriever"] != "bm25")
        # the refusal calibration of every configuration with a distance scale: 141 cuts each, one suggested
        calibrated = connection.sql("SELECT retriever, count(*), count_if(suggested) FROM threshold_sweep "
                                    "GROUP BY 1 ORDER BY 1").fetchall()
        assert calibrated == [(name, 141 * len(STRATEGIES) * len(MODELS), len(STRATEGIES) * len(MODELS))
                              for name in ("ann", "dense", "late_interaction")]
        assert connection.sql("SELECT count(*) FROM suggested_cuts WHERE auroc BETWEEN 0 AND 1").fetchall() == [
            (3 * len(STRATEGIES) * len(MODELS),)]
        # the graph index against exact search, per configuration: a tiny index is searched exactly
        assert connection.sql("SELECT count(*), min(ann_recall_at_10) FROM ann_recall").fetchall() == [
            (len(STRATEGIES) * len(MODELS), 1.0)]
        costs = {row["strategy"]: row for row in connection.sql(
            "SELECT * FROM chunk_stats WHERE model = 'all-MiniLM-L6-v2'").to_arrow_table().to_pylist()}
        assert set(costs) == set(STRATEGIES)
        # the three documents are short: no chunk reaches the 256-token window, no answer is cut
        assert all(row["truncated_chunks"] == 0 and row["answers_destroyed"] == 0 for row in costs.values())
        assert costs["blind"]["header_tokens"] == costs["boundaries_overlap"]["header_tokens"] == 0
        assert 0 < costs["boundaries_header"]["header_token_share"] < 1
        assert isinstance(costs["blind"]["tokens_embedded"], int)

    parquet = paths.parquet_root(tmp_path / "home")
    vectors = pq.read_table(parquet / "embeddings/model=all-MiniLM-L6-v2/strategy=blind/data.parquet")
    assert set(vectors.column("model").to_pylist()) == {"all-MiniLM-L6-v2"}
    assert vectors.schema.field("vector").type.list_size == 384
    runs = pq.read_table(parquet / "retrieval_runs/model=wordllama/strategy=blind/data.parquet")
    # one row per query and retriever, a miss kept with a null rank, and the stamp on every row
    assert {"query_id", "retriever", "chunk_ids", "scores", "distances", "hit_rank", "relevant_ranks",
            "relevant_total", "latency_ms", "stage_ms", "model", "revision", "dimension", "normalized",
            "pipeline_version", "extractor_version", "snapshot_id", "strategy"} <= set(runs.column_names)
    assert runs.schema.field("hit_rank").type == "int64" and runs.schema.field("distances").type.value_type == "double"
    assert runs.num_rows == 8 * 5  # 6 needle + 2 out-of-domain queries x 5 retrievers
    extracted = pq.read_table(parquet / "extracted_text/data.parquet").to_pylist()
    assert sorted((row["doc_id"], row["status"]) for row in extracted) == [
        ("fridge-notes.txt", "ok"), ("guide/kettles.html", "ok"), ("toasters.html", "ok")]


def _resources(settings, models=None):
    return {"settings": settings, "models": models or FakeEmbeddingModels(),
            "io_manager": ParquetIOManager(home=settings.home)}


def test_missing_corpus_folder_stops_the_first_asset_naming_it(tmp_path, tiny_needles):
    missing = tmp_path / "no-such-corpus"
    settings = _settings(tmp_path, missing, tiny_needles)
    result = materialize(ASSETS, selection=["corpus_snapshot"], resources=_resources(settings),
                         instance=DagsterInstance.ephemeral(), raise_on_error=False)
    assert not result.success
    failure = result.get_step_failure_events()[0]
    assert failure.step_key == "corpus_snapshot"
    error = failure.event_specific_data.error
    assert error.cause.cls_name == "CorpusError"
    assert error.cause.message == f"rag_assets.lib.ingest.corpus.CorpusError: corpus folder {missing} does not exist\n"


def test_our_measures_agree_with_ir_measures_on_real_retrieval_rows(tmp_path, tiny_corpus, tiny_needles):
    """success@k (= recall@k for one needle), MRR and nDCG@10 from DuckDB against ir_measures (pytrec_eval), to 1e-9."""
    import ir_measures
    from ir_measures import RR, Qrel, ScoredDoc, Success, nDCG

    settings = _settings(tmp_path, tiny_corpus, tiny_needles)
    materialize_all(settings, DagsterInstance.ephemeral(), models=EmbeddingModels(), model_keys=["wordllama"],
                    strategies=["blind", "boundaries_header"], progress=lambda _: None)
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as connection:
        rows = connection.sql("SELECT * FROM query_measures").to_arrow_table().to_pylist()
        ours = {(r["strategy"], r["retriever"]): r
                for r in comparison(connection, ["strategy", "retriever"]).to_pylist()}
    measures = [Success @ 1, Success @ 4, Success @ 8, Success @ 20, RR, nDCG @ 10]
    checked = 0
    for (strategy, retriever), expected in ours.items():
        qrels, run = [], []
        for row in (r for r in rows if (r["strategy"], r["retriever"]) == (strategy, retriever)):
            query = row["query_id"]
            relevant = [row["chunk_ids"][rank - 1] for rank in row["relevant_ranks"]]
            # relevant chunks outside the list (and a needle no chunk holds) still count in the ideal
            relevant += [f"unretrieved-{i}" for i in range(max(row["relevant_total"], 1) - len(relevant))]
            qrels += [Qrel(query, doc, 1) for doc in relevant]
            # scores from ranks, so ties cannot reorder the list
            run += [ScoredDoc(query, doc, float(len(row["chunk_ids"]) - i)) for i, doc in enumerate(row["chunk_ids"])]
        theirs = ir_measures.calc_aggregate(measures, qrels, run)
        for k in (1, 4, 8, 20):
            assert theirs[Success @ k] == pytest.approx(expected[f"success_at_{k}"], abs=1e-9)
        assert theirs[RR] == pytest.approx(expected["mrr"], abs=1e-9)
        assert theirs[nDCG @ 10] == pytest.approx(expected["ndcg_at_10"], abs=1e-9)
        checked += 1
    assert checked == 2 * 5  # two strategies x dense, ann, bm25, hybrid, late_interaction
