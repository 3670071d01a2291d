"""The rankings a labelling pool is made of (``evalsets/pooling.py``): every configuration of the latest
evaluation asked each question, from the indexes as materialised (never rebuilt), one index loaded at a
time. A BM25 configuration (model ``bm25``) is asked through any index of its strategy. An external retriever
of the evaluation is asked through the client it was judged with (``external``: its key -> how to ask it),
each passage it returns located in the corpus as its judgement locates it; one that is not registered any
more, or that the labeller leaves out (its service may cost per query), is named in
``PooledRankings.left_out``, as is a question it failed and a passage it returned that lies nowhere in the
corpus."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from rag_assets.lib.answer.ask import load_index
from rag_assets.lib.embed.models import load_for_asking
from rag_assets.lib.embed.spec import ModelSpec
from rag_assets.lib.evalsets.queries import Query
from rag_assets.lib.evalsets.questions import Question
from rag_assets.lib.retrieve.engine import run_retrievers
from rag_assets.lib.retrieve.external.asking import ask_all
from rag_assets.lib.retrieve.external.hits import Ask
from rag_assets.lib.retrieve.external.locate import Locator
from rag_assets.lib.store.stamps import EXTERNAL_MODEL

LEXICAL_MODEL = "bm25"


@dataclass
class PooledRankings:
    rankings: dict[str, list[list[tuple[str, int, int]]]] = field(default_factory=lambda: defaultdict(list))
    configurations: list[str] = field(default_factory=list)  # "model: strategy x retriever" of each ranking
    left_out: list[str] = field(default_factory=list)  # configurations not asked, with why


def pooled_rankings(home: Path, questions: Sequence[Question], configurations: Sequence[tuple[str, str, str]],
                    models: dict[str, ModelSpec], onnx_dir: Path, depth: int,
                    progress: Callable[[str], None] = lambda _: None, external: Mapping[str, Ask | None] = {},
                    documents: Mapping[str, str] = {}) -> PooledRankings:
    """{question id: [each configuration's top ``depth`` chunks (an external retriever's passages) as
    (doc_id, start, end)]}. ``external``: how to ask each external retriever, None where it is left out;
    ``documents``: the canonical texts its passages are located in."""
    found = PooledRankings()
    by_index: dict[tuple[str, str], list[str]] = defaultdict(list)
    for model, strategy, retriever in configurations:
        if model == EXTERNAL_MODEL:
            if external.get(retriever) is None:
                found.left_out.append(f"external retriever {retriever} ("
                                      + ("left out" if retriever in external else "not in the retrievers file") + ")")
                continue
            progress(f"pooling external retriever {retriever}")
            _ask_external(found, retriever, external[retriever], questions, depth, Locator(documents))
            continue
        by_index[(model, strategy)].append(retriever)
    strategies_with_index = {strategy: model for model, strategy in by_index if model != LEXICAL_MODEL}
    queries = [Query(q.id, None, "label", q.text) for q in questions]
    embedders = {}
    for (model, strategy), retrievers in sorted(by_index.items()):
        host = model if model != LEXICAL_MODEL else strategies_with_index.get(strategy)
        if host is None:
            found.left_out.append(f"{model}: {strategy} x {', '.join(retrievers)} (no dense index of {strategy})")
            continue
        progress(f"pooling {model}: {strategy} x {', '.join(retrievers)}")
        if host not in embedders:
            embedders[host] = load_for_asking(host, models, onnx_dir)
        index = load_index(home, embedders[host], strategy)
        chunks = {chunk["chunk_id"]: (chunk["doc_id"], chunk["start"], chunk["end"]) for chunk in index.chunks}
        rows = run_retrievers(queries, index.index, depth, retrievers)
        for row in rows:
            found.rankings[row["query_id"]].append([chunks[c] for c in row["chunk_ids"]])
        found.configurations += [f"{model}: {strategy} x {retriever}" for retriever in retrievers]
    return found


def _ask_external(found: PooledRankings, key: str, ask: Ask, questions: Sequence[Question], depth: int,
                  locator: Locator) -> None:
    """One external retriever's top ``depth`` passages for every question, each located in the corpus."""
    failed = unlocated = 0
    for answered in ask_all(ask, [(q.id, q.text) for q in questions], depth):
        failed += answered.error is not None
        ranking = []
        for hit in answered.hits:
            located = locator.locate(hit)
            if located.doc_id is None:
                unlocated += 1
                continue
            ranking.append((located.doc_id, located.start, located.end))
        found.rankings[answered.query_id].append(ranking)
    found.configurations.append(f"external: {key}")
    if failed or unlocated:
        found.left_out.append(f"external retriever {key}: {failed} of {len(questions)} questions failed, "
                              f"{unlocated} passages found nowhere in the corpus")
