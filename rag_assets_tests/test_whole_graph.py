"""The whole graph, materialised through Dagster on the small corpus with the real embedding models, and its
judging done again independently."""

import json
from pathlib import Path

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
from rag_assets_tests.conftest import SMALL_CORPUS, SMALL_NEEDLES, SMALL_OUT_OF_DOMAIN
from rag_assets_tests.fakes import FakeEmbeddingModels

pytestmark = pytest.mark.integration


def _settings(tmp_path, corpus, needles) -> RagSettings:
    return RagSettings(home=str(tmp_path / "home"), corpus_dir=str(corpus), eval_set=str(needles),
                       out_of_domain=str(needles.parent / "tiny_out_of_domain.jsonl"))


@pytest.fixture(scope="module")
def small_home(tmp_path_factory):
    """The whole graph on the small corpus: every model, every strategy, every retriever, once."""
    settings = RagSettings(home=str(tmp_path_factory.mktemp("small") / "home"), corpus_dir=str(SMALL_CORPUS),
                           eval_set=str(SMALL_NEEDLES), out_of_domain=str(SMALL_OUT_OF_DOMAIN))
    instance = DagsterInstance.ephemeral()
    materialize_all(settings, instance, models=EmbeddingModels(), progress=lambda _: None)
    return settings, instance


def test_whole_graph_with_the_real_models(small_home):
    settings, instance = small_home
    # the runs list tells what each run was: named jobs, tagged with the command, models and strategies
    runs = instance.get_runs()
    assert {run.job_name for run in runs} == {"observe_inputs", "observe_strategies", "evaluation_inputs", "chunking", "model_partition",
                                              "evaluation_metrics"}
    assert all(run.tags["rag_assets/trigger"] == "cli" and run.tags["rag_assets/command"] == "evaluate"
               and run.tags["rag_assets/models"] == ",".join(MODELS)
               and run.tags["rag_assets/strategies"] == ",".join(STRATEGIES) for run in runs)
    assert len([run for run in runs if run.job_name == "model_partition"]) == len(MODELS) * len(STRATEGIES)

    with duckdb.connect(str(settings.duckdb_path), read_only=True) as connection:
        # 14 needles x 2 phrasings and 4 out-of-domain queries, through every retriever but the cross encoder
        # (BM25 uses no model: once per strategy, under its own name)
        assert connection.sql("SELECT retriever, count(*) FROM retrieval_results GROUP BY 1 ORDER BY 1").fetchall() == [
            (name, 32 * len(STRATEGIES) * (1 if name == "bm25" else len(MODELS)))
            for name in ("ann", "bm25", "dense", "hybrid", "late_interaction")]
        # the out-of-domain queries are kept, with nothing to find
        assert connection.sql("SELECT count(*), count(hit_rank) FROM retrieval_results "
                              "WHERE query_kind = 'out_of_domain' AND retriever = 'dense'").fetchall() == [
            (4 * len(STRATEGIES) * len(MODELS), 0)]
        # more chunks than the 25 kept: a list never holds the whole index, so a needle can be missed
        lists = connection.sql("SELECT min(len(chunk_ids)), max(len(chunk_ids)) FROM retrieval_results "
                               "WHERE retriever = 'dense'").fetchall()
        assert lists == [(25, 25)]
        misses = connection.sql("SELECT count(*) FROM retrieval_results WHERE query_kind = 'needle' "
                                "AND hit_rank IS NULL").fetchall()[0][0]
        assert misses > 0
        stamps = connection.sql("SELECT DISTINCT model, dimension FROM retrieval_results ORDER BY model").fetchall()
        assert stamps == [("all-MiniLM-L6-v2", 384), ("bm25", None), ("paraphrase-MiniLM-L3-v2", 384),
                          ("wordllama", 256)]
        metrics = connection.sql("SELECT * FROM metrics ORDER BY strategy, phrasing").to_arrow_table().to_pylist()
        assert len(metrics) == 2 * len(STRATEGIES) * (len(MODELS) * 4 + 1) and all(m["queries"] == 14 for m in metrics)
        # the refusal calibration of every configuration with a distance scale: 141 cuts each, one suggested
        calibrated = connection.sql("SELECT retriever, count(*), count_if(suggested) FROM threshold_sweep "
                                    "GROUP BY 1 ORDER BY 1").fetchall()
        assert calibrated == [(name, 141 * len(STRATEGIES) * len(MODELS), len(STRATEGIES) * len(MODELS))
                              for name in ("ann", "dense", "late_interaction")]
        assert connection.sql("SELECT count(*) FROM suggested_cuts WHERE auroc BETWEEN 0 AND 1").fetchall() == [
            (3 * len(STRATEGIES) * len(MODELS),)]
        assert connection.sql("SELECT count(*) FROM ann_recall").fetchall() == [(len(STRATEGIES) * len(MODELS),)]
        costs = {row["strategy"]: row for row in connection.sql(
            "SELECT * FROM chunk_stats WHERE model = 'all-MiniLM-L6-v2'").to_arrow_table().to_pylist()}
    assert set(costs) == set(STRATEGIES)
    # no boundary strategy cuts a needle, and blind cutting destroys exactly the needles that straddle a
    # multiple of 512 characters of their page's canonical text (found here, not by the project's code)
    texts = _canonical_texts(settings)
    straddling = sorted(needle["id"] for needle in _needles() if _straddles(texts[needle["doc_id"]], needle["needle"]))
    assert costs["blind"]["destroyed_needles"] == straddling and straddling
    # the overlap tail is embedded, never judged: blind_overlap's contents are blind's cuts, so it destroys the same
    assert costs["blind_overlap"]["destroyed_needles"] == straddling
    assert all(costs[s]["answers_destroyed"] == 0 for s in STRATEGIES if s.startswith("boundaries"))
    # a whole page is longer than all-MiniLM-L6-v2's window of 256 word pieces; a 512-character chunk is not
    assert costs["document"]["truncated_chunks"] > 0 and costs["boundaries"]["truncated_chunks"] == 0
    assert costs["blind"]["header_tokens"] == costs["boundaries_overlap"]["header_tokens"] == 0
    assert 0 < costs["boundaries_header"]["header_token_share"] < 1

    parquet = paths.parquet_root(Path(settings.home))
    vectors = pq.read_table(parquet / "embeddings/model=all-MiniLM-L6-v2/strategy=blind/data.parquet")
    assert set(vectors.column("model").to_pylist()) == {"all-MiniLM-L6-v2"}
    assert vectors.schema.field("vector").type.list_size == 384
    runs = pq.read_table(parquet / "retrieval_runs/model=wordllama/strategy=blind/data.parquet")
    # one row per query and retriever, a miss kept with a null rank, and the stamp on every row
    assert {"query_id", "retriever", "chunk_ids", "scores", "distances", "hit_rank", "relevant_ranks",
            "relevant_total", "latency_ms", "stage_ms", "model", "revision", "dimension", "normalized",
            "pipeline_version", "extractor_version", "snapshot_id", "strategy"} <= set(runs.column_names)
    assert runs.schema.field("hit_rank").type == "int64" and runs.schema.field("distances").type.value_type == "double"
    assert runs.num_rows == 32 * 4  # BM25 once per strategy: in lexical_runs, not in a model partition
    lexical = pq.read_table(parquet / "lexical_runs/strategy=blind/data.parquet")
    assert lexical.num_rows == 32 and set(lexical.column("model").to_pylist()) == {"bm25"}
    extracted = pq.read_table(parquet / "extracted_text/data.parquet").to_pylist()
    assert len(extracted) == 30 and all(row["status"] == "ok" for row in extracted)


# Judging done again here, from the needle's text and the page's canonical text only: a chunk answers a
# needle query when the needle, whitespace folded, lies inside the chunk's own content (its header and
# overlap tail never count). Nothing of the project's judging is used, so a fault there shows as a disagreement with ir_measures below.

def _fold(text: str) -> str:
    return " ".join(text.split())


def _needles() -> list[dict]:
    return [json.loads(line) for line in SMALL_NEEDLES.read_text().splitlines() if line.strip()]


def _canonical_texts(settings: RagSettings) -> dict[str, str]:
    table = pq.read_table(paths.partition_path(Path(settings.home), "extracted_text"), columns=["doc_id", "text"])
    return {row["doc_id"]: row["text"] for row in table.to_pylist()}


def _straddles(text: str, needle: str) -> bool:
    """Whether blind cutting (every 512 characters of the canonical text, from its start) cuts the needle."""
    start = text.find(needle)
    assert start >= 0, needle
    return start // 512 != (start + len(needle) - 1) // 512


def test_judging_done_independently_agrees_with_our_measures_through_ir_measures(small_home):
    """success@k, precision@k, MRR and nDCG@10 of every model x strategy x retriever, from the rows' ranked
    chunk ids and qrels derived here, by ir_measures (pytrec_eval), against ours to 1e-9."""
    import ir_measures
    from ir_measures import RR, P, Qrel, ScoredDoc, Success, nDCG

    settings, _ = small_home
    needle_of = {f"{n['id']}:{phrasing}": n for n in _needles() for phrasing in n["questions"]}
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as connection:
        rows = connection.sql("SELECT model, strategy, retriever, query_id, chunk_ids FROM latest_results "
                              "WHERE query_kind = 'needle'").to_arrow_table().to_pylist()
        ours = {(r["model"], r["strategy"], r["retriever"]): r for r in comparison(connection).to_pylist()}
    holders: dict[tuple[str, str], set[str]] = {}
    others: dict[tuple[str, str], int] = {}  # chunks of the needle's page that do not hold it
    for strategy in STRATEGIES:
        chunks = pq.read_table(paths.partition_path(Path(settings.home), "chunks", [("strategy", strategy)]),
                               columns=["chunk_id", "doc_id", "content"]).to_pylist()
        for query, needle in needle_of.items():
            page = [c for c in chunks if c["doc_id"] == needle["doc_id"]]
            holders[(strategy, query)] = {c["chunk_id"] for c in page
                                          if _fold(needle["needle"]) in _fold(c["content"])}
            others[(strategy, query)] = len(page) - len(holders[(strategy, query)])
    measures = [*(Success @ k for k in (1, 4, 8, 20)), *(P @ k for k in (1, 4, 8, 20)), RR, nDCG @ 10]
    for (model, strategy, retriever), expected in ours.items():
        qrels, run = [], []
        for row in (r for r in rows if (r["model"], r["strategy"], r["retriever"]) == (model, strategy, retriever)):
            query = row["query_id"]
            # a needle no chunk holds whole still has its answer: one relevant item that is never retrieved
            qrels += [Qrel(query, chunk, 1) for chunk in holders[(strategy, query)] or {f"{query}:destroyed"}]
            run += [ScoredDoc(query, chunk, float(len(row["chunk_ids"]) - i)) for i, chunk in enumerate(row["chunk_ids"])]
        theirs = ir_measures.calc_aggregate(measures, qrels, run)
        for k in (1, 4, 8, 20):
            assert theirs[Success @ k] == pytest.approx(expected[f"success_at_{k}"], abs=1e-9), (model, strategy, retriever, k)
            assert theirs[P @ k] == pytest.approx(expected[f"precision_at_{k}"], abs=1e-9), (model, strategy, retriever, k)
        assert theirs[RR] == pytest.approx(expected["mrr"], abs=1e-9)
        assert theirs[nDCG @ 10] == pytest.approx(expected["ndcg_at_10"], abs=1e-9)
    assert len(ours) == len(MODELS) * len(STRATEGIES) * 4 + len(STRATEGIES)  # BM25 once per strategy
    # the judging can tell chunks apart: under every strategy but `document`, each needle's page has chunks
    # that do not hold it, so a hit by page would be counted wrong
    assert all(count > 0 for (strategy, _), count in others.items() if strategy != "document")


def test_the_evaluation_page_says_what_the_stored_rows_say(small_home):
    """``report/index.html``, written by the metrics asset: its embedded data, recomputed here from the stored rows
    and the chunks without the page's code: the pick is the decision's; each configuration's answer to each needle
    is the share of its phrasings whose needle chunk ends inside the budget; a needle a configuration missed says
    where its chunk ranked, or why no chunk of its list holds it; a highlighted needle is the needle."""
    import base64
    import gzip
    import re

    settings, _ = small_home
    home = Path(settings.home)
    text = (home / "report" / "index.html").read_text()
    assert "http://" not in text.split('<script id="page-data"')[0] and "https://" not in text
    data = json.loads(gzip.decompress(base64.b64decode(
        re.search(r'<script id="page-data" type="application/octet-stream">([^<]+)</script>', text).group(1))))
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as connection:
        [decision] = connection.sql("SELECT * FROM decision").to_arrow_table().to_pylist()
        budget = decision["budget"]
        rows = connection.sql("SELECT model, strategy, retriever, needle_id, query_id, hit_rank, context_tokens "
                              "FROM latest_results WHERE query_kind = 'needle'").to_arrow_table().to_pylist()
        destroyed = {s: set(d) for s, d in connection.sql(
            "SELECT strategy, any_value(destroyed_needles) FROM chunk_stats GROUP BY strategy").fetchall()}
    assert data["decision"]["pick"] == f"{decision['model']}|{decision['strategy']}|{decision['retriever']}"
    inside: dict = {}
    for row in rows:
        won = row["hit_rank"] is not None and row["context_tokens"][row["hit_rank"] - 1] <= budget
        inside.setdefault(f"{row['model']}|{row['strategy']}|{row['retriever']}", {}).setdefault(
            row["needle_id"], []).append(won)
    needles = [n["id"] for n in data["needles"]]
    for key, by_needle in inside.items():
        expected = "".join({1.0: "1", 0.0: "0", 0.5: "h"}[sum(by_needle[n]) / len(by_needle[n])] for n in needles)
        assert data["needle_values"][key] == expected, key
    questions = data["questions"]
    needle_index = {n: i for i, n in enumerate(needles)}
    looked = 0
    for key, answers in data["answers"].items():
        for answer in answers:
            question = questions[answer["q"]]
            if question["query_kind"] != "needle":
                continue
            row = next(r for r in rows if f"{r['model']}|{r['strategy']}|{r['retriever']}" == key
                       and r["query_id"] == question["query_id"])
            assert answer["r"] == row["hit_rank"]
            if not answer["in"]:  # ranked past the budget; else destroyed by the cut, else not in the list
                strategy = key.split("|")[1]
                assert answer["why"]["kind"] == ("over_budget" if row["hit_rank"] else "destroyed"
                                                 if question["needle_id"] in destroyed[strategy] else "not_in_list")
            for ref in answer["c"] + ([answer["o"]] if "o" in answer else []):
                mark = data["highlights"].get(f"{ref}:{needle_index[question['needle_id']]}")
                if mark:
                    shown = data["chunks"][ref][3]
                    assert " ".join(shown[mark[0]:mark[1]].split()) == " ".join(question["needle"].split())
                    looked += 1
    assert looked > 0


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
