from pathlib import Path

import pyarrow as pa
from dagster import Failure, Output, asset

from rag_assets.lib.evalset import expand_queries, load_needles, needle_problems
from rag_assets.resources import RagSettings


@asset(group_name="evaluation")
def eval_set(settings: RagSettings, extracted_text: pa.Table) -> Output[pa.Table]:
    """The needle questions, one row per query, checked against the current corpus."""
    needles = load_needles(Path(settings.eval_set))
    documents = {r["doc_id"]: r["text"] for r in extracted_text.to_pylist() if r["status"] == "ok"}
    headings = {
        r["doc_id"]: [s["heading"] for s in r["sections"] if s["heading"]]
        for r in extracted_text.to_pylist()
        if r["status"] == "ok"
    }
    problems = needle_problems(needles, documents, headings)
    if problems:
        raise Failure(
            description=f"evaluation set {settings.eval_set} does not fit the corpus:\n" + "\n".join(problems)
        )
    by_id = {needle.id: needle for needle in needles}
    rows = [
        {
            "query_id": query.query_id,
            "needle_id": query.needle_id,
            "phrasing": query.phrasing,
            "question": query.text,
            "doc_id": by_id[query.needle_id].doc_id,
            "needle": by_id[query.needle_id].needle,
        }
        for query in expand_queries(needles)
    ]
    return Output(
        pa.Table.from_pylist(rows),
        metadata={"needles": len(needles), "queries": len(rows), "path": settings.eval_set},
    )
