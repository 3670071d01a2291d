"""What rebuilds itself, and when: Dagster's declarative automation conditions of the graph.

Evaluated by the automation sensor (``rag_assets_automation``) under ``dagster dev`` or the daemon.

- Every stage rebuilds its materialised partitions when what they are made from changes (a
  partition never materialised is built only when it is new: a new registry entry or strategy),
  so a change travels to the end of the graph (Dagster's staleness stops one step below it; these conditions do not). A model's weights
  change (a new observed data version of its ``embedding_model`` partition): that model's
  ``embeddings`` and ``retrieval_runs`` partitions, every materialised strategy, in one run each,
  then ``retrieval_metrics``; no partition of another model. A new registry entry: its new,
  missing partitions. A new corpus snapshot: extraction, the evaluation set's checks, every chunk
  partition, every index, the metrics.
- Dagster launches one run per partition key, and only parents with the same partitioning run in
  the same run. So each stage is triggered by the parents it follows on the graph's main line
  (``retrieval_runs`` by its embeddings, the weights and its strategy's ``lexical_runs``, not by the
  chunks they are rebuilt from), and waits while a parent is being rebuilt: a run never reads a parent
  that is about to change. The evaluation set triggers only when its content changed (its data version).
- ``retrieval_metrics`` follows ``retrieval_runs``, ``refusal_calibration`` and ``external_runs`` (every
  upstream change reaches it through them). It never starts while a partition it reads is requested
  (on the same tick) or in a run not yet finished, queued included, and a partition it reads that is
  rebuilt after it started triggers it again; it does not wait for partitions never materialised (a
  home that evaluates two strategies of six still gets its metrics). When partitions finish on
  different ticks it may evaluate in between; the last rebuild evaluates again.
"""

from dagster import AssetSelection, AutomationCondition


def _updated(*parents: str) -> AutomationCondition:
    """One of these parents was updated (or is requested into the same run)."""
    return AutomationCondition.any_deps_updated().allow(AssetSelection.assets(*parents))


def _content_changed(*parents: str) -> AutomationCondition:
    """One of these parents has a new data version (rematerialised with other content)."""
    return AutomationCondition.any_deps_match(AutomationCondition.data_version_changed()).allow(
        AssetSelection.assets(*parents))


def _rebuild_on(trigger: AutomationCondition, label: str) -> AutomationCondition:
    """``eager`` with its trigger narrowed to what it follows and to partitions that exist: newly
    missing (a new registry entry or strategy), or materialised and triggered, since last handled;
    when no parent is missing or running and it is not running itself."""
    return (
        (AutomationCondition.newly_missing() | (trigger & ~AutomationCondition.missing())).since_last_handled()
        & ~AutomationCondition.any_deps_missing()
        & ~AutomationCondition.any_deps_in_progress()
        & ~AutomationCondition.in_progress()
    ).with_label(label)


# corpus_snapshot -> extracted_text -> eval_set are unpartitioned: one run carries the chain
REBUILD_CORPUS = _rebuild_on(AutomationCondition.any_deps_updated(), "a parent changed")
REBUILD_CHUNKS = _rebuild_on(AutomationCondition.any_deps_updated(), "the extracted text changed")
REBUILD_CHUNK_QUALITY = _rebuild_on(_updated("chunks") | _content_changed("eval_set"),
                                    "its chunks, or the evaluation set's content, changed")
REBUILD_LEXICAL = REBUILD_CHUNK_QUALITY  # BM25 once per strategy: made from the same two
REBUILD_EMBEDDINGS = _rebuild_on(AutomationCondition.any_deps_updated(), "its chunks or the weights changed")
# the evaluation set reaches it through lexical_runs, which follows it and is always materialised (empty when no
# retriever uses it), so that a partition never fuses the BM25 ranking of the questions before
REBUILD_RETRIEVAL = _rebuild_on(_updated("embeddings", "embedding_model", "lexical_runs"),
                                "its index or weights, or its strategy's BM25 rankings, changed")
# an external retriever's partition: rebuilt when the store it asks was re-indexed (a new observed index
# version of its ``external_retriever`` partition, every 15 minutes), the evaluation set's content or the
# corpus text it is judged against changed; never on an embedding model (it uses none of the project's)
REBUILD_EXTERNAL = _rebuild_on(_content_changed("external_retriever", "eval_set") | _updated("extracted_text"),
                               "its store's index version, the evaluation set's content or the corpus text changed")
REBUILD_REFUSAL = _rebuild_on(_updated("retrieval_runs"), "its retrieval rows changed")
# A refusal cut whose retrieval rows changed after it was last built: its rebuild is pending (requested
# on this tick, queued, running, or failed). Dagster's will_be_requested sees only parents that can run
# in the same run, and the automation rebuilds the cut in a run of its own partition.
CUT_PENDING = _updated("retrieval_runs").since(AutomationCondition.newly_updated()).with_label(
    "its retrieval rows changed after it was last built")
EVALUATE = (
    (AutomationCondition.newly_missing() | _updated("retrieval_runs", "refusal_calibration", "external_runs"))
    .since_last_handled()
    & ~AutomationCondition.any_deps_in_progress()
    & ~AutomationCondition.any_deps_match(CUT_PENDING).allow(AssetSelection.assets("refusal_calibration"))
    & ~AutomationCondition.in_progress()
).with_label("after its retrieval partitions and their refusal cuts are rebuilt, none of its inputs being built")
# the evaluation published to the team's database (publish.url) after each new evaluation run
PUBLISH = _rebuild_on(_updated("retrieval_metrics"), "a new evaluation run was recorded")
