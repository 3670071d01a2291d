"""What an external retriever's rows are stamped with: its key as the strategy, and the index version it
reports (or a hash of its answers to fixed probe questions) as the revision, so a re-indexed store shows
its runs stale."""

from __future__ import annotations

import hashlib
from typing import Mapping

from rag_assets.lib.retrieve.external.hits import Ask
from rag_assets.lib.retrieve.external.kinds.base import ExternalSpec
from rag_assets.lib.store.stamps import EXTERNAL_MODEL, PIPELINE_VERSION

PROBES = ("How do I install it?", "What does the configuration file contain?", "Why does it fail to start?")


def external_stamp(key: str, index_version: str, snapshot_id: str | None, extractor_version: str | None) -> dict:
    """The stamp of an external retriever's rows: model ``external``, its key as the strategy (one system,
    its own chunking), the index version it reported (or the hash of its probe answers) as the revision."""
    return {"model": EXTERNAL_MODEL, "revision": index_version, "dimension": 0, "normalized": False,
            "pipeline_version": PIPELINE_VERSION, "extractor_version": extractor_version, "snapshot_id": snapshot_id,
            "strategy": key}


def index_version(spec: ExternalSpec, ask: Ask, environ: Mapping[str, str] | None = None) -> str:
    """What the retriever says its index version is (``reported_version``: an http entry's
    ``index_version_url``, asked with the entry's headers from ``environ``), else a hash of its answers to fixed
    probe questions: a re-indexed store answers differently."""
    reported = spec.reported_version(environ or {})
    if reported is not None:
        return reported
    digest = hashlib.sha256()
    for probe in PROBES:
        for hit in ask(probe, 10):
            digest.update(f"{hit.doc_id}\0{hit.text}\0".encode("utf-8"))
    return "probe-" + digest.hexdigest()[:16]
