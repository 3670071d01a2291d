"""Stored results in the field's own formats: a TREC run file and its qrels, so a user can check our
figures with trec_eval, ranx or ir_measures.

    run:   qid Q0 docid rank score tag     (one line per retrieved item, rank from 1)
    qrels: qid 0 docid relevance           (one line per relevant item)

A needle query is judged by chunk: its items are chunk ids, and its relevant items the chunks that
hold the needle. The ids of holders the list did not reach are not stored, so they are written as
``<qid>:unretrieved:<n>`` (they count in the ideal ranking of nDCG and in recall, as in our
metrics). A document query (BEIR) is judged by document: its chunk ranking is rolled up to a
document ranking (each document where its best chunk is) and its qrels are its relevant documents.
Scores are written as ``len(list) - rank + 1``, strictly decreasing, so no tool can reorder ties.
Out-of-domain queries have nothing relevant and are left out, as in our metrics.

With these files trec_eval, ranx or ir_measures reproduce our success@k, MRR and nDCG@10 on every
query, and recall@k on needle and document queries. An external retriever's items are the passages it
returned, named by where each was located in the corpus (``doc#char=start,end``), which is also how a
document query rolls them up to documents. One case reads differently: a BEIR evidence
query answered by any one of several sentences has every holding chunk in its qrels, so a TREC
tool's R@k for it is the share of holders retrieved, where ours is whether the answer was found.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import duckdb

from rag_assets.lib.evalsets.judging import document_ranking
from rag_assets.lib.store.names import inside


def stored_rows(connection: duckdb.DuckDBPyConnection, model: str, strategy: str, retriever: str) -> list[dict]:
    """The newest run's judged rows of one configuration."""
    return connection.sql(
        "SELECT query_id, query_kind, chunk_ids, relevant_ranks, relevant_total FROM latest_results "
        "WHERE query_kind <> 'out_of_domain' AND model = ? AND strategy = ? AND retriever = ? ORDER BY query_id",
        params=[model, strategy, retriever]).to_arrow_table().to_pylist()


def located_documents(rows: list[dict]) -> dict[str, str]:
    """{item: document} for an external retriever's rows, whose items are where each passage was located in the
    corpus (``doc#char=start,end``); a passage that could not be located belongs to no document."""
    return {item: item.partition("#char=")[0] for row in rows for item in row["chunk_ids"] or () if "#char=" in item}


def trec_lines(rows: list[dict], chunk_doc: Mapping[str, str], relevant_docs: Mapping[str, list[str]],
               tag: str) -> tuple[list[str], list[str]]:
    """(run lines, qrels lines) of stored retrieval rows."""
    run, qrels = [], []
    for row in rows:
        query = row["query_id"]
        if row["query_kind"] == "document":
            items = document_ranking(row["chunk_ids"], chunk_doc)
            relevant = list(relevant_docs.get(query, []))
        else:
            items = list(row["chunk_ids"])
            relevant = [items[rank - 1] for rank in row["relevant_ranks"] or []]
            relevant += [f"{query}:unretrieved:{n}" for n in range(max(row["relevant_total"] or 0, 1) - len(relevant))]
        run += [f"{query} Q0 {item} {rank} {len(items) - rank + 1} {tag}" for rank, item in enumerate(items, start=1)]
        qrels += [f"{query} 0 {item} 1" for item in relevant]
    return run, qrels


def write_trec(folder: Path, name: str, run: list[str], qrels: list[str]) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = inside(folder, f"{name}.run"), inside(folder, f"{name}.qrels")
    run_path.write_text("\n".join(run) + "\n", encoding="utf-8")
    qrels_path.write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return run_path, qrels_path
