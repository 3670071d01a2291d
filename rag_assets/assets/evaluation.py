from pathlib import Path

import pyarrow as pa
from dagster import AssetCheckResult, AssetCheckSeverity, AssetIn, MetadataValue, Output, asset, asset_check

from rag_assets.asset_support import versioned_output
from rag_assets.lib.beir import CORPUS_NAMES, is_beir_folder, load_judgements
from rag_assets.lib.evalset import (
    BEIR, NEEDLE_SET, OUT_OF_DOMAIN, content_hash, duplicate_id_problems, expand_queries, heading_problems, load_needles,
    load_out_of_domain, needles_from_rows, occurrence_problems, phrasing_problems, query_rows, set_version,
)
from rag_assets.lib.extraction import canonical_texts
from rag_assets.resources import RagSettings


@asset(group_name="evaluation", deps=["extracted_text"])
def eval_set(settings: RagSettings) -> Output[pa.Table]:
    """The evaluation set, one row per query: needles in every phrasing, then out-of-domain queries.

    Its blocking checks hold everything downstream back when the set does not fit the corpus; it
    depends on the extracted text so that a changed corpus re-runs them. Its data version is the
    hash of its files, so re-checking an unchanged set stales nothing.
    """
    source = Path(settings.eval_set)
    out_of_domain_files = [Path(settings.out_of_domain)] if settings.out_of_domain else []
    out_of_domain = load_out_of_domain(out_of_domain_files[0]) if out_of_domain_files else []
    kinds = {o.id: o.kind for o in out_of_domain}
    if is_beir_folder(source):
        files = [p for p in sorted(source.rglob("*")) if p.is_file() and p.name not in CORPUS_NAMES]
        needles = []
        queries = load_judgements(source, settings.beir_split) + expand_queries([], out_of_domain)
        origin = BEIR
    else:
        files = [source]
        needles = load_needles(source)
        queries = expand_queries(needles, out_of_domain)
        kinds |= {n.id: n.kind for n in needles}
        origin = NEEDLE_SET
    files += out_of_domain_files
    version, digest = set_version(files[0]), content_hash(files)
    rows = query_rows(queries, kinds, version, digest, origin)
    return versioned_output(
        pa.Table.from_pylist(rows),
        digest,
        {
            "version": version, "content_hash": digest, "source": origin, "needles": len(needles),
            "needle_queries": sum(r["query_kind"] == "needle" for r in rows),
            "document_queries": sum(r["query_kind"] == "document" for r in rows),
            "out_of_domain_queries": len(out_of_domain),
            "out_of_domain_near": sum(o.kind == "near" for o in out_of_domain),
            "out_of_domain_off_topic": sum(o.kind == "off_topic" for o in out_of_domain),
            "needle_kinds": MetadataValue.json({k: sum(n.kind == k for n in needles) for k in sorted({n.kind for n in needles})}),
            "files": MetadataValue.json([str(f) for f in files]),
        },
    )


def _result(problems: list[str], passed_text: str, severity=AssetCheckSeverity.ERROR) -> AssetCheckResult:
    return AssetCheckResult(
        passed=not problems, severity=severity,
        description="\n".join(problems) if problems else passed_text,
        metadata={"offending": len(problems), "problems": MetadataValue.json(problems)},
    )


def _ok_documents(extracted_text: pa.Table) -> list[dict]:
    return [r for r in extracted_text.to_pylist() if r["status"] == "ok"]


@asset_check(asset=eval_set, blocking=True, additional_ins={"extracted_text": AssetIn()},
             description="Every needle occurs exactly once in the current corpus snapshot (whitespace folded).")
def needles_occur_once(eval_set: pa.Table, extracted_text: pa.Table) -> AssetCheckResult:
    documents = canonical_texts(extracted_text.to_pylist())
    return _result(occurrence_problems(needles_from_rows(eval_set.to_pylist()), documents),
                   "every needle occurs exactly once, in its own document")


@asset_check(asset=eval_set, blocking=True, additional_ins={"extracted_text": AssetIn()},
             description="No needle is a heading or lies inside one.")
def needles_not_headings(eval_set: pa.Table, extracted_text: pa.Table) -> AssetCheckResult:
    headings = {r["doc_id"]: [s["heading"] for s in r["sections"] if s["heading"]] for r in _ok_documents(extracted_text)}
    return _result(heading_problems(needles_from_rows(eval_set.to_pylist()), headings), "no needle is a heading")


@asset_check(asset=eval_set, blocking=True, description="Query ids are unique (needle id and phrasing, out-of-domain id).")
def query_ids_unique(eval_set: pa.Table) -> AssetCheckResult:
    return _result(duplicate_id_problems(eval_set.column("query_id").to_pylist()), "every id is unique")


@asset_check(asset=eval_set, blocking=True, description="Every needle carries every required phrasing, non-empty.")
def phrasings_present(settings: RagSettings, eval_set: pa.Table) -> AssetCheckResult:
    return _result(phrasing_problems(needles_from_rows(eval_set.to_pylist(), NEEDLE_SET), settings.phrasings),
                   f"every needle has {', '.join(settings.phrasings)}")


@asset_check(asset=eval_set, blocking=True, description="There are out-of-domain queries to calibrate refusal on.")
def out_of_domain_present(settings: RagSettings, eval_set: pa.Table) -> AssetCheckResult:
    count = sum(kind == OUT_OF_DOMAIN for kind in eval_set.column("query_kind").to_pylist())
    # a user who configured no out-of-domain file gets a warning, not a stop
    severity = AssetCheckSeverity.ERROR if settings.out_of_domain else AssetCheckSeverity.WARN
    problems = [] if count else [f"no out-of-domain queries ({settings.out_of_domain or 'none configured'})"]
    return _result(problems, f"{count} out-of-domain queries", severity)


EVAL_SET_CHECKS = [needles_occur_once, needles_not_headings, query_ids_unique, phrasings_present, out_of_domain_present]
