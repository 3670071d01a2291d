"""The evaluation set: needle questions (or a BEIR split) and out-of-domain queries, with the blocking
checks that hold everything downstream back when the set does not fit the corpus."""

from pathlib import Path

import pyarrow as pa
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetIn,
    Failure,
    MetadataValue,
    Output,
    asset,
    asset_check,
)

from rag_assets.asset_support import as_metadata, markdown_table, versioned_output
from rag_assets.automation import REBUILD_CORPUS
from rag_assets.lib.evalsets.checks import (
    duplicate_id_problems,
    heading_problems,
    headings_by_document,
    occurrence_problems,
    phrasing_problems,
    rejection_problems,
)
from rag_assets.lib.evalsets.loading import load_eval_set
from rag_assets.lib.evalsets.queries import NEEDLE_SET, OUT_OF_DOMAIN, needles_from_rows
from rag_assets.lib.evalsets.relocation import (
    KEPT,
    changes_of,
    changes_table,
    counts,
    counts_of_changes,
    lost_lines,
    relocate_eval_set,
    too_many_lost,
    with_changes,
)
from rag_assets.lib.ingest.documents import canonical_texts
from rag_assets.lib.store.schemas import EVAL_SET, table_from_rows
from rag_assets.resources import RagSettings


@asset(group_name="evaluation", automation_condition=REBUILD_CORPUS, kinds={"python", "parquet"})
def eval_set(context: AssetExecutionContext, settings: RagSettings, extracted_text: pa.Table) -> Output[pa.Table]:
    """The evaluation set, one row per query: needles in every phrasing, then out-of-domain queries.

    Each needle is first re-located in the snapshot (``relocation.py``): one kept or moved is asked where it is
    now; one an edit lost (edited, with a successor offered; removed; now repeated or a heading) is left out and
    named, and more than ``evaluation.max_lost_needles`` of them lost stops the evaluation. Its blocking checks
    hold everything downstream back when the set does not fit the corpus; it depends on the extracted text so
    that a changed corpus re-runs them. Its data version is the hash of its files (and of what the snapshot made
    of its needles), so re-checking an unchanged set stales nothing. A set its blocking checks would reject fails
    here, before it is written, so it never replaces the last good one.
    """
    loaded = load_eval_set(Path(settings.eval_set), Path(settings.out_of_domain) if settings.out_of_domain else None,
                           settings.beir_split)
    extracted = extracted_text.to_pylist()
    asked, relocations = relocate_eval_set(loaded, extracted)
    stop = too_many_lost(relocations, settings.max_lost_needles)
    problems = ([*lost_lines(relocations)] if stop else []) + rejection_problems(
        asked.rows, extracted, settings.phrasings, bool(settings.out_of_domain))
    if problems:
        raise Failure(description=f"the evaluation set {settings.eval_set} was rejected and not written (the last good "
                      f"one stays): " + (stop + ". " if stop else "") + "; ".join(problems),
                      metadata={"problems": MetadataValue.json(problems)})
    for line in lost_lines(relocations):
        context.log.warning(f"needle {line}: left out of this evaluation (see eval_set's needles_changed)")
    return versioned_output(with_changes(table_from_rows(EVAL_SET, asked.rows, "eval_set"), relocations), asked.digest,
                            {**as_metadata(asked.summary()), **relocation_metadata(relocations)})


def relocation_metadata(relocations: list) -> dict:
    changed = [r.row() for r in relocations if r.status != KEPT]
    return {"needles_in_the_snapshot": MetadataValue.json(counts(relocations)),
            "needles_changed": markdown_table(changes_table(relocations)) if changed
            else MetadataValue.md(changes_table(relocations))}


def _result(problems: list[str], passed_text: str, severity=AssetCheckSeverity.ERROR) -> AssetCheckResult:
    return AssetCheckResult(
        passed=not problems, severity=severity,
        description="\n".join(problems) if problems else passed_text,
        metadata={"offending": len(problems), "problems": MetadataValue.json(problems)},
    )


@asset_check(asset=eval_set, blocking=True, additional_ins={"extracted_text": AssetIn()},
             description="Every needle occurs exactly once in the current corpus snapshot (whitespace folded).")
def needles_occur_once(eval_set: pa.Table, extracted_text: pa.Table) -> AssetCheckResult:
    documents = canonical_texts(extracted_text.to_pylist())
    return _result(occurrence_problems(needles_from_rows(eval_set.to_pylist()), documents),
                   "every needle occurs exactly once, in its own document")


@asset_check(asset=eval_set, blocking=True, additional_ins={"extracted_text": AssetIn()},
             description="No needle is a heading or lies inside one.")
def needles_not_headings(eval_set: pa.Table, extracted_text: pa.Table) -> AssetCheckResult:
    headings = headings_by_document(extracted_text.to_pylist())
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


@asset_check(asset=eval_set,
             description="Every needle of the needle file still holds in this snapshot: a needle an edit moved, "
             "changed or removed is named (a warning; more than evaluation.max_lost_needles lost stops eval_set).")
def needles_follow_the_corpus(eval_set: pa.Table) -> AssetCheckResult:
    # what eval_set found when it re-located the needles, carried by its own file: nothing is re-located twice
    changes = changes_of(eval_set.schema)
    changed = [f"{c['needle_id']}: {c['reason']}" for c in changes]
    found = counts_of_changes(changes, len(needles_from_rows(eval_set.to_pylist(), NEEDLE_SET)))
    return AssetCheckResult(
        passed=not changed, severity=AssetCheckSeverity.WARN,
        description="\n".join(changed) if changed else f"all {found[KEPT]} needles kept",
        metadata={**found, "offending": len(changed), "problems": MetadataValue.json(changed)})


EVAL_SET_CHECKS = [needles_follow_the_corpus, needles_occur_once, needles_not_headings, query_ids_unique, phrasings_present, out_of_domain_present]
