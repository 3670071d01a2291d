"""The rankings a labelling pool is made of (``evalsets/pooling.py``): every configuration of the latest
evaluation asked each question, from the indexes as materialised (never rebuilt), one index loaded at a
time. A BM25 configuration (model ``bm25``) is asked through any index of its strategy; an external
retriever is not asked here (its service may cost per query) and is named in ``PooledRankings.left_out``."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from rag_assets.lib.answer.ask import load_index
from rag_assets.lib.embed.models import load_for_asking
from rag_assets.lib.embed.spec import ModelSpec
from rag_assets.lib.evalsets.queries import Query
from rag_assets.lib.evalsets.questions import Question
from rag_assets.lib.retrieve.engine import run_retrievers
from rag_assets.lib.store.stamps import EXTERNAL_MODEL

LEXICAL_MODEL = "bm25"


@dataclass
class PooledRankings:
    rankings: dict[str, list[list[tuple[str, int, int]]]] = field(default_factory=lambda: defaultdict(list))
    configurations: list[str] = field(default_factory=list)  # "model: strategy x retriever" of each ranking
    left_out: list[str] = field(default_factory=list)  # configurations not asked, with why


def pooled_rankings(home: Path, questions: Sequence[Question], configurations: Sequence[tuple[str, str, str]],
                    models: dict[str, ModelSpec], onnx_dir: Path, depth: int,
                    progress: Callable[[str], None] = lambda _: None) -> PooledRankings:
    """{question id: [each configuration's top ``depth`` chunks as (doc_id, start, end)]}."""
    found = PooledRankings()
    by_index: dict[tuple[str, str], list[str]] = defaultdict(list)
    for model, strategy, retriever in configurations:
        if model == EXTERNAL_MODEL:
            found.left_out.append(f"external retriever {retriever} (not asked while labelling)")
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
