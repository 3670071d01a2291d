"""Asking the index a question: a gate that can say no, and cited, budgeted context for a language model.

``ask`` retrieves from the latest materialised index of one model x strategy (never rebuilding it),
keeps at most ``k`` chunks whose distance is under the cut, and either refuses (nothing under the
cut: NO ANSWER) or returns numbered sources, best first, and the prompt it would send:

- A source is a chunk's ``content`` (its own words, exactly ``canonical[start:end]``), never the
  embedded ``text`` with its header and overlap, with its document, section path, locator
  (``#char=start,end``; an HTML page also gets ``page.html#anchor``, a PDF ``file.pdf#page=N``) and
  distance. A model only ever writes ``[n]``; the program attaches documents and links.
- Sources are whole chunks in rank order, added until the first that does not fit the token budget
  (counted with the context tokenizer, ``lib/retrieve/context.py``): exactly the context whose success
  the evaluation measures at that budget. A best chunk larger than the budget is an error that says
  so, never a chunk cut before its answer.
- Without a configuration given, ``ask`` answers with the verdict's pick at its budget
  (``choice.py``). A retriever without a distance (hybrid) is gated on the distance of the first
  retriever upstream of it that has one (dense, of the same index): nothing is answered when that
  retriever's best chunk is not under the cut.
- ``verify_citations`` checks an answer's ``[n]`` against the sources it was given.

No language model is needed anywhere: generating the answer is outside this project.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from rag_assets.lib.embed.partition import token_cache, vectors_of
from rag_assets.lib.embed.spec import Embedder
from rag_assets.lib.evalsets.queries import Query
from rag_assets.lib.retrieve.context import count_tokens, running_totals, whole_chunks_within
from rag_assets.lib.retrieve.engine import Index, Ranking, gate_of, gated, run_retrievers
from rag_assets.lib.store import paths

GATED = gated()  # the retrievers with a distance to gate on (the registry says which)
DEFAULT_K = 25  # chunks considered, as many as the evaluation keeps: the budget decides how many are sent
DEFAULT_BUDGET = 1024  # context tokens, the verdict's default budget
INSTRUCTION = (
    "Answer the question using only the numbered sources below. Cite every claim with the number of its "
    "source in square brackets, like [1]. If the sources do not contain the answer, say that you cannot "
    "answer from them and stop."
)
_CITATION = re.compile(r"\[(\d+)\]")


class AskError(RuntimeError):
    """The index cannot answer: nothing materialised, stale, or a bad option; the message says the fix."""


class CitationError(ValueError):
    """An answer cites sources it was not given."""


@dataclass(frozen=True)
class Source:
    number: int
    chunk_id: str
    doc_id: str
    title: str
    section: str
    start: int  # the quoted content is exactly canonical[start:end]
    end: int
    locator: str  # "#char=start,end"
    link: str  # page.html#anchor, file.pdf#page=N, or doc#char=start,end
    distance: float | None  # the chunk's distance, when the retriever has one (hybrid has none)
    tokens: int  # context tokens of its content
    content: str


@dataclass
class Answer:
    question: str
    model: str
    revision: str
    strategy: str
    retriever: str
    cut: float
    k: int
    budget: int
    refused: bool
    retrieved: list[tuple[str, float | None]]  # the retriever's top k with distances, before the gate
    gate: str = ""  # the retriever whose distance the cut applies to (``retriever`` when it has one)
    chosen: str = ""  # why this configuration: the verdict's pick, or what the command gave
    sources: list[Source] = field(default_factory=list)
    prompt: str | None = None
    latency_ms: float = 0.0

    def refusal(self) -> str:
        gate = "" if self.gate in ("", self.retriever) else f" (of {self.gate})"
        return f'NO ANSWER: nothing under cosine distance {self.cut:.3f}{gate} for "{self.question}"'

    def heading(self) -> str:
        """Which configuration answered, and why it was this one."""
        gate = "" if self.gate in ("", self.retriever) else f", gated on {self.gate}'s distance"
        return (f"{self.model}: {self.strategy} x {self.retriever} at {self.budget} context tokens{gate}"
                + (f" ({self.chosen})" if self.chosen else ""))

    def text(self) -> str:
        if self.refused:
            return self.heading() + "\n" + self.refusal()
        lines = [f"[{s.number}] {s.doc_id} · {s.section} · {s.locator} · {s.tokens} tokens"
                 + (f" · d={s.distance:.3f}" if s.distance is not None else "")
                 + (f" · {s.link}" if "#char=" not in s.link else "") for s in self.sources]
        return self.heading() + "\n" + "\n".join(lines) + "\n\n" + (self.prompt or "")

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False)


@dataclass
class Document:
    doc_id: str
    format: str
    title: str
    text: str
    sections: list[dict]


@dataclass
class AskIndex:
    """One model x strategy as materialised: its index, chunks and documents."""

    model: str
    revision: str
    strategy: str
    index: Index
    chunks: list[dict]
    documents: dict[str, Document]
    positions: dict[str, int] = field(default_factory=dict)  # chunk id -> its row in the index

    def __post_init__(self) -> None:
        self.positions = {chunk_id: i for i, chunk_id in enumerate(self.index.chunk_ids)}


def _partition(home: Path, asset: str, model: str | None, strategy: str) -> Path:
    dimensions = ([("model", model)] if model else []) + [("strategy", strategy)]
    return paths.stored_partition(home, asset, dimensions)


def load_index(home: Path, embedder: Embedder, strategy: str) -> AskIndex:
    """The latest materialised index of ``embedder``'s model x ``strategy``; refuses one that is
    missing or was built with other weights or for other chunks, naming the command that fixes it."""
    files = {asset: _partition(home, asset, embedder.key if asset == "embeddings" else None, strategy)
             for asset in ("embeddings", "chunks")}
    files["extracted_text"] = paths.stored_partition(home, "extracted_text")
    missing = [f"{asset} ({path})" for asset, path in files.items() if not path.is_file()]
    if missing:
        raise AskError(f"nothing materialised for {embedder.key} x {strategy} under {home}: missing "
                       f"{', '.join(missing)}; run `rag-assets evaluate --models {embedder.key} --strategies {strategy}`")
    embeddings = paths.read_stored(files["embeddings"], "embeddings", [("model", embedder.key), ("strategy", strategy)])
    chunks = paths.read_stored(files["chunks"], "chunks", [("strategy", strategy)])
    revision = embeddings.column("revision")[0].as_py() if len(embeddings) else embedder.revision
    if revision != embedder.revision:
        raise AskError(f"the index of {embedder.key} x {strategy} was built with weights {revision}, but the installed "
                       f"weights are {embedder.revision}: run `rag-assets backfill --model {embedder.key}`")
    if embeddings.column("chunk_id").to_pylist() != chunks.column("chunk_id").to_pylist():
        raise AskError(f"the embeddings of {embedder.key} x {strategy} do not match its chunks: "
                       f"run `rag-assets backfill --model {embedder.key} --strategies {strategy}`")
    documents = {row["doc_id"]: Document(row["doc_id"], row["format"], row["title"], row["text"], row["sections"])
                 for row in paths.read_stored(files["extracted_text"], "extracted_text").to_pylist()
                 if row["status"] == "ok"}
    rows = chunks.select(["chunk_id", "doc_id", "section", "text", "content", "start", "end"]).to_pylist()
    index = Index(chunk_ids=[r["chunk_id"] for r in rows], texts=[r["text"] for r in rows],
                  vectors=vectors_of(embeddings, embedder.dimension), embedder=embedder,
                  token_cache=token_cache(home, embedder), read_all_token_vectors=False)
    return AskIndex(embedder.key, revision, strategy, index, rows, documents)


def source_link(document: Document, start: int, end: int) -> str:
    """Where a person opens the source: the HTML page and its section's anchor, a PDF page, else the
    character range."""
    section = next((s for s in reversed(document.sections) if s["start"] <= start), None)
    anchor = section["anchor"] if section else None  # an HTML id, or "page=N" for a PDF page
    return f"{document.doc_id}#{anchor}" if anchor else f"{document.doc_id}#char={start},{end}"


def build_sources(ask_index: AskIndex, kept: Sequence[tuple[int, float | None]], budget: int) -> list[Source]:
    """Numbered sources, best first: whole chunks until the first that does not fit the token budget."""
    sources: list[Source] = []
    tokens = count_tokens([ask_index.chunks[position]["content"] for position, _ in kept])
    for (position, distance), own in zip(kept[:whole_chunks_within(running_totals(tokens), budget)], tokens):
        chunk = ask_index.chunks[position]
        start, end = chunk["start"], chunk["end"]
        document = ask_index.documents[chunk["doc_id"]]
        sources.append(Source(
            number=len(sources) + 1, chunk_id=chunk["chunk_id"], doc_id=chunk["doc_id"], title=document.title,
            section=chunk["section"], start=start, end=end, locator=f"#char={start},{end}",
            link=source_link(document, start, end), distance=None if distance is None else float(distance),
            tokens=own, content=chunk["content"]))
    return sources


def build_prompt(question: str, sources: Sequence[Source]) -> str:
    blocks = [f"[{s.number}] {s.title} · {s.section}\n{s.content}" for s in sources]
    return f"{INSTRUCTION}\n\nSources:\n\n" + "\n\n".join(blocks) + f"\n\nQuestion: {question}\n"


def _rankings(ask_index: AskIndex, question: str, names: Sequence[str], k: int) -> dict[str, Ranking]:
    rows = run_retrievers([Query("ask", None, "ask", question)], ask_index.index, k, list(dict.fromkeys(names)))
    return {row["retriever"]: Ranking([ask_index.positions[c] for c in row["chunk_ids"]], row["scores"],
                                      row["distances"]) for row in rows}


def ask(ask_index: AskIndex, question: str, retriever: str, cut: float, k: int = DEFAULT_K,
        budget: int = DEFAULT_BUDGET, chosen: str = "") -> Answer:
    """Retrieve, gate (nothing when the gate's best distance is not under the cut; of a retriever with a
    distance, only the chunks under it), and build the sources (whole chunks within the budget) and prompt."""
    started = time.perf_counter()
    try:
        gate = gate_of(retriever)
    except ValueError as error:
        raise AskError(str(error)) from None
    rankings = _rankings(ask_index, question, [retriever, gate], k)
    ranking, gating = rankings[retriever], rankings[gate]
    distances = ranking.distances if ranking.distances is not None else [None] * len(ranking.indices)
    top = list(zip(ranking.indices, distances))[:k]
    if gate == retriever:
        kept = [(position, distance) for position, distance in top if distance < cut]
    else:
        kept = top if gating.distances and gating.distances[0] < cut else []
    answer = Answer(question=question, model=ask_index.model, revision=ask_index.revision,
                    strategy=ask_index.strategy, retriever=retriever, cut=cut, k=k, budget=budget, refused=not kept,
                    retrieved=[(ask_index.index.chunk_ids[p], None if d is None else float(d)) for p, d in top],
                    gate=gate, chosen=chosen)
    if kept:
        answer.sources = build_sources(ask_index, kept, budget)
        if not answer.sources:
            best = count_tokens([ask_index.chunks[kept[0][0]]["content"]])[0]
            raise AskError(f"the best source is {best} context tokens, more than the budget of {budget}: raise "
                           "--budget, or ask a configuration of smaller chunks (the verdict's pick fits its budget)")
        answer.prompt = build_prompt(question, answer.sources)
    answer.latency_ms = (time.perf_counter() - started) * 1000.0
    return answer


def keep_token_vectors(ask_index: AskIndex) -> str | None:
    """Store the token vectors late interaction computed, for the next question; a storage folder that
    cannot take them (read-only, full) is a warning, never a lost answer."""
    try:
        ask_index.index.save_token_vectors()
    except OSError as error:
        return f"the token vectors of this question were not kept for the next ({error})"
    return None


def verify_citations(answer_text: str, sources: Sequence[Source]) -> list[int]:
    """The source numbers an answer cites, in order of first citation; CitationError naming any
    number that is not one of the sources given."""
    cited = list(dict.fromkeys(int(n) for n in _CITATION.findall(answer_text)))
    given = {s.number for s in sources}
    invented = [n for n in cited if n not in given]
    if invented:
        raise CitationError(f"the answer cites {', '.join(f'[{n}]' for n in invented)}, which "
                            f"{'is' if len(invented) == 1 else 'are'} not among the sources given "
                            f"({', '.join(f'[{n}]' for n in sorted(given)) or 'none'})")
    return cited
