"""An evaluation set from what a user brings: a needle file (JSON Lines) or a BEIR folder, plus an
optional file of out-of-domain queries, as one row per query with the set's version and hash."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rag_assets.lib.evalsets.beir import load_judgements
from rag_assets.lib.evalsets.queries import (
    BEIR,
    DOCUMENT,
    NEEDLE,
    NEEDLE_SET,
    EvalSetError,
    Needle,
    OutOfDomainQuery,
    content_hash,
    expand_queries,
    load_needles,
    load_out_of_domain,
    query_rows,
    set_version,
)
from rag_assets.lib.ingest.beir_corpus import is_beir_folder
from rag_assets.lib.ingest.corpus import BEIR_CORPUS_FILES


@dataclass
class EvalSet:
    rows: list[dict]
    needles: list[Needle]
    out_of_domain: list[OutOfDomainQuery]
    files: list[Path]
    source: str  # NEEDLE_SET or BEIR
    version: str
    digest: str

    def summary(self) -> dict:
        return {
            "version": self.version, "content_hash": self.digest, "source": self.source, "needles": len(self.needles),
            "needle_queries": sum(r["query_kind"] == NEEDLE for r in self.rows),
            "document_queries": sum(r["query_kind"] == DOCUMENT for r in self.rows),
            "out_of_domain_queries": len(self.out_of_domain),
            "out_of_domain_near": sum(o.kind == "near" for o in self.out_of_domain),
            "out_of_domain_off_topic": sum(o.kind == "off_topic" for o in self.out_of_domain),
            "needle_kinds": {k: sum(n.kind == k for n in self.needles) for k in sorted({n.kind for n in self.needles})},
            "files": [str(f) for f in self.files],
        }


    def with_needles(self, needles: list[Needle], digest: str) -> EvalSet:
        """The same set asking only ``needles`` (each where it is now), its rows stamped ``digest``."""
        kinds = {o.id: o.kind for o in self.out_of_domain} | {n.id: n.kind for n in needles}
        labelled = frozenset(n.id for n in needles if n.origin == "labelled")
        rows = query_rows(expand_queries(needles, self.out_of_domain), kinds, self.version, digest, self.source,
                          labelled)
        return EvalSet(rows, needles, self.out_of_domain, self.files, self.source, self.version, digest)


def load_eval_set(source: Path, out_of_domain_file: Path | None = None, beir_split: str = "test") -> EvalSet:
    """Needles in every phrasing (or a BEIR split's judged queries), then the out-of-domain queries."""
    source = Path(source)
    out_of_domain = load_out_of_domain(out_of_domain_file) if out_of_domain_file else []
    kinds = {o.id: o.kind for o in out_of_domain}
    if is_beir_folder(source):
        files = [p for p in sorted(source.rglob("*")) if p.is_file() and p.name not in BEIR_CORPUS_FILES]
        needles: list[Needle] = []
        queries = load_judgements(source, beir_split) + expand_queries([], out_of_domain)
        origin = BEIR
    else:
        if source.is_dir():
            raise EvalSetError(f"evaluation set {source} is a folder but not a BEIR folder: it has no corpus.jsonl "
                               f"(a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv); give a "
                               f"BEIR folder or a needle file (JSON lines)")
        if beir_split != "test":
            raise EvalSetError(f"--beir-split {beir_split} was given, but the evaluation set {source} is a needle "
                               f"file, which has no splits; leave --beir-split out or give a BEIR folder")
        files = [source]
        needles = load_needles(source)
        queries = expand_queries(needles, out_of_domain)
        kinds |= {n.id: n.kind for n in needles}
        origin = NEEDLE_SET
    files += [Path(out_of_domain_file)] if out_of_domain_file else []
    version, digest = set_version(files[0]), content_hash(files)
    labelled = frozenset(n.id for n in needles if n.origin == "labelled")
    return EvalSet(query_rows(queries, kinds, version, digest, origin, labelled), needles, out_of_domain, files,
                   origin, version, digest)
