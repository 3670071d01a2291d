"""The judgements of a BEIR-format benchmark: document-level qrels, and optional evidence spans.

Layout of a BEIR folder::

    corpus.jsonl[.gz]       {"_id": ..., "title": ..., "text": ...} per line: the documents
    queries.jsonl           {"_id": ..., "text": ...} per line
    qrels/<split>.tsv       query-id <TAB> corpus-id <TAB> score, with a header line
    rationales_<split>.jsonl  optional: {"query_id", "doc_id", "spans": [{"text", ...}]} per line

Each judged query of the split becomes a ``document`` query (phrasing ``query``): a retrieved
chunk counts when its document is relevant (score > 0), and chunk ranks roll up to document ranks
by best chunk. A query with evidence spans also becomes a ``needle`` query (phrasing
``evidence``, id ``<query>:evidence``): a chunk counts when it holds any one evidence sentence
whole, as for our own needles. The corpus file's documents are read by ``ingest.beir_corpus``.
"""

from __future__ import annotations

import csv
from pathlib import Path

from rag_assets.lib.evalsets.queries import (
    DOCUMENT,
    MAX_QUESTION_CHARS,
    NEEDLE,
    EvalSetError,
    Query,
    json_lines,
    too_long,
)

QUERY_PHRASING = "query"
EVIDENCE_PHRASING = "evidence"


def load_judgements(folder: Path, split: str = "test") -> list[Query]:
    """The judged queries of a split: document queries, then evidence (needle) queries."""
    folder = Path(folder)
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        raise EvalSetError(f"BEIR folder {folder} has no qrels/{split}.tsv")
    relevant: dict[str, list[str]] = {}
    with qrels_path.open(encoding="utf-8") as handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), start=1):
            if number == 1 and row and not row[-1].strip().lstrip("-").isdigit():
                continue  # the header line
            if len(row) < 3 or not row[2].strip().lstrip("-").isdigit():
                raise EvalSetError(f"{qrels_path}:{number}: expected query-id, corpus-id and an integer score")
            if int(row[2]) > 0:
                relevant.setdefault(row[0], []).append(row[1])
    texts = {}
    for where, record in json_lines(folder / "queries.jsonl", "BEIR queries"):
        if "_id" not in record:
            raise EvalSetError(f"{where}: missing _id")
        texts[str(record["_id"])] = str(record.get("text", ""))
        size = too_long(texts[str(record["_id"])], MAX_QUESTION_CHARS, "the query")
        if size:
            raise EvalSetError(f"{where}: {size}")
    missing = sorted(set(relevant) - set(texts), key=str)
    if missing:
        raise EvalSetError(f"{qrels_path}: queries {', '.join(missing[:5])} are not in queries.jsonl")
    queries = [
        Query(query_id=qid, needle_id=None, phrasing=QUERY_PHRASING, text=texts[qid], query_kind=DOCUMENT,
              relevant_doc_ids=tuple(docs))
        for qid, docs in relevant.items()
    ]
    rationales = folder / f"rationales_{split}.jsonl"
    if rationales.is_file():
        spans: dict[str, list[tuple[str, str]]] = {}
        for where, record in json_lines(rationales, "BEIR evidence"):
            qid = str(record.get("query_id"))
            if qid not in relevant:
                raise EvalSetError(f"{where}: query {qid} has no judgement in qrels/{split}.tsv")
            for span in record.get("spans", []):
                spans.setdefault(qid, []).append((str(record["doc_id"]), str(span["text"])))
        queries += [
            Query(query_id=f"{qid}:{EVIDENCE_PHRASING}", needle_id=f"{qid}:{EVIDENCE_PHRASING}",
                  phrasing=EVIDENCE_PHRASING, text=texts[qid], query_kind=NEEDLE,
                  spans=tuple(pairs), relevant_doc_ids=tuple(dict.fromkeys(doc for doc, _ in pairs)))
            for qid, pairs in spans.items()
        ]
    return queries
