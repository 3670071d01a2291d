"""`rag-assets ask` against a tiny materialised project with the real default model: the gate, cited
and budgeted sources whose locators slice the canonical text back, citation checks, the NO ANSWER
message and exit code, traces, and refusals of a missing or stale index."""

import json

import duckdb
import pyarrow.parquet as pq
import pytest
from dagster import DagsterInstance

from rag_assets.cli import EXIT_REFUSED, main
from rag_assets.lib.answer.ask import (
    AskError,
    CitationError,
    ask,
    load_index,
    verify_citations,
)
from rag_assets.lib.answer.traces import traces_path
from rag_assets.lib.embed.models import load_model
from rag_assets.lib.store import paths
from rag_assets.resources import RagSettings
from rag_assets.runner.evaluation import materialize_all

pytestmark = pytest.mark.integration

MODEL, STRATEGY = "all-MiniLM-L6-v2", "boundaries_header"
QUESTION = "How do I remove limescale from a kettle with vinegar?"


@pytest.fixture(scope="module")
def home(tmp_path_factory, request):
    fixtures = request.config.rootpath / "rag_assets_tests" / "fixtures"
    home = tmp_path_factory.mktemp("ask") / "home"
    settings = RagSettings(home=str(home), corpus_dir=str(fixtures / "tiny_corpus"),
                           eval_set=str(fixtures / "tiny_needles.jsonl"),
                           out_of_domain=str(fixtures / "tiny_out_of_domain.jsonl"))
    # two models x two strategies: `ask` has configurations to choose from, better and worse ones
    materialize_all(settings, DagsterInstance.ephemeral(), model_keys=[MODEL, "wordllama"],
                    strategies=[STRATEGY, "blind"], progress=lambda _: None)
    return home


@pytest.fixture(scope="module")
def index(home):
    return load_index(home, load_model(MODEL), STRATEGY)


def _canonical(home):
    return {r["doc_id"]: r["text"] for r in pq.read_table(paths.partition_path(home, "extracted_text")).to_pylist()}


def test_sources_quote_content_that_their_locators_slice_back(home, index):
    answer = ask(index, QUESTION, "dense", cut=0.9, k=4, budget=10_000)
    assert not answer.refused and 1 <= len(answer.sources) <= 4
    canonical = _canonical(home)
    for source in answer.sources:
        assert canonical[source.doc_id][source.start:source.end] == source.content
        assert source.locator == f"#char={source.start},{source.end}"
    first = answer.sources[0]
    assert first.doc_id == "guide/kettles.html" and "white vinegar" in first.content
    assert first.link.startswith("guide/kettles.html#") and "#char=" not in first.link  # the section's anchor
    # the prompt carries the instruction, the sources' own words (never the embedded header) and the question
    assert "only the numbered sources" in answer.prompt and answer.prompt.rstrip().endswith(QUESTION)
    quoted = answer.prompt.split("Sources:")[1]
    assert all(f"[{s.section}]\n" not in quoted for s in answer.sources)  # the embedded header never
    assert [s.distance for s in answer.sources] == sorted(s.distance for s in answer.sources)


def test_the_gate_keeps_only_chunks_under_the_cut(index):
    everything = ask(index, QUESTION, "dense", cut=2.0, k=4)
    distances = [d for _, d in everything.retrieved]
    assert len(everything.sources) == 4 and distances == sorted(distances)
    cut = (distances[1] + distances[2]) / 2  # between the second and the third
    assert [s.chunk_id for s in ask(index, QUESTION, "dense", cut=cut, k=4).sources] == \
        [c for c, _ in everything.retrieved[:2]]
    refused = ask(index, QUESTION, "dense", cut=distances[0] - 1e-6, k=4)
    assert refused.refused and refused.sources == [] and refused.prompt is None
    heading, said = refused.text().splitlines()
    assert heading == f"{MODEL}: {STRATEGY} x dense at 1024 context tokens"
    assert said == f'NO ANSWER: nothing under cosine distance {refused.cut:.3f} for "{QUESTION}"'


def test_the_budget_holds_whole_chunks_counted_with_the_context_tokenizer(home, index):
    from rag_assets.lib.retrieve.context import count_tokens

    whole = ask(index, QUESTION, "dense", cut=2.0, k=4, budget=10_000)
    assert [s.tokens for s in whole.sources] == count_tokens([s.content for s in whole.sources])
    first, second = whole.sources[0].tokens, whole.sources[1].tokens
    # the first source whole and 10 tokens to spare: the second does not fit whole, so it is not sent at all
    answer = ask(index, QUESTION, "dense", cut=2.0, k=4, budget=first + second - 1)
    assert [s.chunk_id for s in answer.sources] == [whole.sources[0].chunk_id]
    assert answer.sources[0].content == whole.sources[0].content  # never cut before its end
    exactly = ask(index, QUESTION, "dense", cut=2.0, k=4, budget=first + second)
    assert [s.chunk_id for s in exactly.sources] == [s.chunk_id for s in whole.sources[:2]]
    assert sum(s.tokens for s in exactly.sources) <= first + second
    # a best chunk larger than the budget is an error that says so, not a source cut before its answer
    with pytest.raises(AskError, match=rf"the best source is {first} context tokens, more than the budget of "
                                       rf"{first - 1}: raise --budget"):
        ask(index, QUESTION, "dense", cut=2.0, k=4, budget=first - 1)
    assert _canonical(home)[answer.sources[0].doc_id][answer.sources[0].start:answer.sources[0].end] == \
        answer.sources[0].content


def test_hybrid_answers_gated_on_denses_distance(index):
    dense = ask(index, QUESTION, "dense", cut=2.0, k=4)
    best = dense.retrieved[0][1]
    answered = ask(index, QUESTION, "hybrid", cut=best + 1e-6, k=4)
    assert not answered.refused and answered.gate == "dense" and answered.sources[0].distance is None
    assert "gated on dense's distance" in answered.text().splitlines()[0]
    refused = ask(index, QUESTION, "hybrid", cut=best - 1e-6, k=4)
    assert refused.refused and refused.text().endswith(f'(of dense) for "{QUESTION}"')


def test_verify_citations_accepts_given_numbers_and_names_invented_ones(index):
    sources = ask(index, QUESTION, "dense", cut=2.0, k=2).sources
    assert verify_citations("Use vinegar [1]. Rinse after an hour [2][1].", sources) == [1, 2]
    assert verify_citations("I cannot answer from the sources.", sources) == []
    with pytest.raises(CitationError, match=r"cites \[3\], \[7\], which are not among the sources given \(\[1\], \[2\]\)"):
        verify_citations("Boil it [1] for an hour [3], then descale [7].", sources)


def test_a_missing_or_stale_index_is_refused_with_the_command_that_fixes_it(tmp_path, home, index):
    embedder = index.index.embedder
    with pytest.raises(AskError, match=r"nothing materialised for all-MiniLM-L6-v2 x boundaries .*"
                                       r"run `rag-assets evaluate --models all-MiniLM-L6-v2 --strategies boundaries`"):
        load_index(home, embedder, "boundaries")

    class OtherWeights:  # the same model with other weights installed now
        def __getattr__(self, name):
            return "0123456789abcdef" if name == "revision" else getattr(embedder, name)

    with pytest.raises(AskError, match=r"built with weights \w+, but the installed weights are 0123456789abcdef: "
                                       r"run `rag-assets backfill --model all-MiniLM-L6-v2`"):
        load_index(home, OtherWeights(), STRATEGY)


def test_the_command_line_answers_refuses_verifies_and_traces(home, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAG_ASSETS_HOME", str(home))
    given = ["--model", MODEL, "--strategy", STRATEGY, "--retriever", "dense", "--k", "4"]
    assert main(["ask", QUESTION, *given, "--cut", "0.9", "--format", "json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["refused"] is False and answer["sources"][0]["doc_id"] == "guide/kettles.html"

    assert main(["ask", "Who won the 1998 football world cup?", *given, "--cut", "0.05"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith('NO ANSWER: nothing under cosine distance 0.050 for "Who')
    assert main(["ask", "Who won the 1998 football world cup?", *given, "--cut", "0.05", "--strict"]) == EXIT_REFUSED
    capsys.readouterr()

    good, invented = tmp_path / "good.txt", tmp_path / "invented.txt"
    good.write_text("Equal parts vinegar and water [1].")
    invented.write_text("Equal parts vinegar and water [1], says the manual [9].")
    assert main(["ask", QUESTION, *given, "--cut", "0.9", "--verify", str(good)]) == 0
    assert "citations verified: [1]" in capsys.readouterr().err
    assert main(["ask", QUESTION, *given, "--cut", "0.9", "--verify", str(invented)]) == 1
    assert "cites [9], which is not among the sources given" in capsys.readouterr().err

    with duckdb.connect(str(traces_path(home)), read_only=True) as connection:
        traces = connection.sql("SELECT question, refused, cited, len(retrieved) AS retrieved, len(sources) AS sent, "
                                "retriever, revision, latency_ms FROM ask_traces ORDER BY asked_at").fetchall()
    assert [(q[:10], refused, cited) for q, refused, cited, *_ in traces] == [
        (QUESTION[:10], False, None), ("Who won th", True, None), ("Who won th", True, None),
        (QUESTION[:10], False, [1])]
    assert all(row[3] == 4 and row[5] == "dense" and row[7] > 0 for row in traces)
    assert traces[1][4] == 0  # a refusal sends nothing


def test_without_options_ask_uses_the_verdicts_pick_its_budget_and_its_gates_cut(home, monkeypatch, capsys):
    from rag_assets.lib.answer.choice import can_refuse
    from rag_assets.lib.retrieve.engine import gate_of

    with duckdb.connect(str(paths.duckdb_path(home)), read_only=True) as connection:
        cuts = {(m, s, r): c for m, s, r, c in connection.sql(
            "SELECT model, strategy, retriever, cut FROM suggested_cuts").fetchall()}
        ranking = connection.sql("SELECT rank, model, strategy, retriever FROM ranking WHERE rank IS NOT NULL "
                                 "ORDER BY rank").fetchall()
        [(budget,)] = connection.sql("SELECT budget FROM decision").fetchall()
    # the best ranked configuration that can say no (BM25 cannot: it has no distance)
    rank, *expected = next(row for row in ranking if can_refuse(row[3]))
    monkeypatch.setenv("RAG_ASSETS_HOME", str(home))
    assert main(["ask", QUESTION, "--format", "json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [answer["model"], answer["strategy"], answer["retriever"]] == expected
    assert answer["budget"] == budget == 1024
    assert answer["cut"] == cuts[(answer["model"], answer["strategy"], gate_of(answer["retriever"]))]
    assert answer["chosen"].startswith("the verdict's pick" if rank == 1 else f"ranked #{rank}")
    assert main(["report"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Verdict at 1024 context tokens") and "When to refuse" in printed


def test_the_stored_pick_is_the_highest_success_within_1024_tokens_recomputed_from_the_rows(home):
    """The real pipeline (two models, two strategies, every retriever): the decision's pick is, of the
    competing configurations, the one with the highest success within 1024 context tokens recomputed here
    from the stored rows, ties broken by MRR, then by cost (the median latency of the needles' queries, recomputed from
    the rows, then the smaller context, exact before approximate search, the fewer tokens embedded), then the names."""
    from rag_assets_tests.lib.evaluate.needle_rows import success_by_hand

    with duckdb.connect(str(paths.duckdb_path(home)), read_only=True) as connection:
        [decision] = connection.sql("SELECT budget, model, strategy, retriever FROM decision").fetchall()
        success = success_by_hand(connection, 1024)
        competing = {row[:3]: row[3:] for row in connection.sql(
            "SELECT model, strategy, retriever, success, mrr, context_tokens, approximate, "
            "coalesce(tokens_embedded, 9223372036854775807) "
            "FROM ranking WHERE competes").fetchall()}
        latency = {row[:3]: row[3] for row in connection.sql(
            "SELECT model, strategy, retriever, median(latency_ms) FROM latest_results "
            "WHERE query_kind <> 'out_of_domain' GROUP BY ALL").fetchall()}  # the needles' queries, as the figures
        content = connection.sql("SELECT count(*) FROM latest_results WHERE len(content_tokens) <> len(chunk_ids) "
                                 "OR context_tokens[len(context_tokens)] <> list_sum(content_tokens)").fetchall()
    assert decision[0] == 1024 and content == [(0,)]
    for configuration, (stored, *_) in competing.items():
        assert stored == pytest.approx(success[configuration])
    expected = min(competing, key=lambda c: (-success[c], -competing[c][1], latency[c], competing[c][2],
                                             competing[c][3], competing[c][4], *c))
    assert decision[1:] == expected


def test_a_cold_ask_runs_the_verified_onnx_export_without_pytorch_and_answers_the_same(tmp_path):
    """`evaluate` verifies the ONNX export against PyTorch and marks it; a cold `ask` then loads only the
    tokenizer and the graph (no torch import), and gives the answer the PyTorch path gives. `ask -` answers
    a question per line with the index loaded once."""
    import json
    import subprocess
    import sys

    from rag_assets_tests.servers import tiny_home_env

    home = tmp_path / "home"
    env = tiny_home_env(home)
    run = subprocess.run([sys.executable, "-m", "rag_assets.cli", "evaluate", "--models", "all-MiniLM-L6-v2",
                          "--strategies", "boundaries"], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    [verified] = list((home / "onnx" / "all-MiniLM-L6-v2").glob("*/verified"))
    assert float(verified.read_text()) >= 0.9999
    probe = ("import sys, json; from rag_assets.cli import main; code = main(['ask', sys.argv[1], '--format', 'json']);"
             " print(json.dumps({'torch': 'torch' in sys.modules, 'code': code}))")
    question = "How do I remove limescale from a kettle with vinegar?"
    cold = subprocess.run([sys.executable, "-c", probe, question], env=env, capture_output=True, text=True)
    assert cold.returncode == 0, cold.stderr[-2000:]
    *answer_lines, status = cold.stdout.strip().splitlines()
    assert json.loads(status) == {"torch": False, "code": 0}
    fast = json.loads("\n".join(answer_lines))
    verified.unlink()  # without the mark: the PyTorch path (which verifies and marks it again)
    slow = subprocess.run([sys.executable, "-c", probe, question], env=env, capture_output=True, text=True)
    *slow_lines, slow_status = slow.stdout.strip().splitlines()
    assert json.loads(slow_status)["torch"] is True
    slow_answer = json.loads("\n".join(slow_lines))
    assert [c for c, _ in fast["retrieved"]] == [c for c, _ in slow_answer["retrieved"]]
    assert all(abs(a[1] - b[1]) < 1e-4 for a, b in zip(fast["retrieved"], slow_answer["retrieved"]))
    assert verified.exists()
    series = subprocess.run([sys.executable, "-m", "rag_assets.cli", "ask", "-"], env=env, capture_output=True,
                            text=True, input=f"{question}\n\nWhat is the capital of Mars?\n")
    assert series.returncode == 0, series.stderr[-2000:]
    assert series.stdout.count("\n\n") >= 2 and "NO ANSWER" in series.stdout
