"""The run queue of a rag_assets instance: Dagster's ``QueuedRunCoordinator``, with two things done
when a run is submitted (from the UI, a schedule, a sensor or a backfill), before it is queued:

- the run gets the ``rag_assets/trigger`` tag when it has none (``tags.trigger_of``: ``ui`` for a
  launch from the UI), so every run in the runs list says what started it;
- a run for a model partition that names no entry of the model registry fails there and then, naming
  the key and the registered models, and that partition is removed. The UI's launch dialog offers
  "Add partition" for any text typed into the model dimension (the dimension is dynamic, so that a
  registry entry becomes a partition without a reload); the partition is added before the launch, so
  the launch is where a typo is caught, before any step runs or anything is written.

Loaded in the daemon process, it also makes Dagster's backfill daemon look for new backfills every
``BACKFILL_POLL_SECONDS`` instead of every 30 s (``dagster_compat.poll_backfills_every``).

``dagster.yaml`` names this class (``instance/dagster_yaml.py``); ``rag-assets`` runs execute in-process
and are never queued.
"""

from __future__ import annotations

from dagster import DagsterRun, QueuedRunCoordinator, SubmitRunContext

from rag_assets.dagster_compat import poll_backfills_every
from rag_assets.lib.embed.models import registry
from rag_assets.lib.embed.spec import ModelUnavailableError
from rag_assets.partitions import MODEL, model_partitions
from rag_assets.settings import current
from rag_assets.tags import TRIGGER_TAG, trigger_of

_MODEL_PARTITION_TAG = f"dagster/partition/{MODEL}"  # a multi-partitioned run's model key
_PARTITION_TAG = "dagster/partition"  # a run of one partition: the model key of embedding_model's


def unregistered_model(run: DagsterRun, registered: dict) -> str | None:
    """The model key a run names that the registry has no entry for, or None."""
    key = run.tags.get(_MODEL_PARTITION_TAG)
    if key is None and run.asset_selection and {k.to_user_string() for k in run.asset_selection} == {"embedding_model"}:
        key = run.tags.get(_PARTITION_TAG)
    return key if key is not None and key not in registered else None


BACKFILL_POLL_SECONDS = 3  # Dagster's backfill daemon: 30 s


class RagRunCoordinator(QueuedRunCoordinator):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        poll_backfills_every(BACKFILL_POLL_SECONDS)  # in the daemon process: a backfill's runs start within seconds

    def submit_run(self, context: SubmitRunContext) -> DagsterRun:
        run = context.dagster_run
        trigger = trigger_of(run.tags)
        if trigger:
            self._instance.add_run_tags(run.run_id, {TRIGGER_TAG: trigger})
        try:
            registered = registry(current().models_file)
        except ModelUnavailableError:  # a broken registry file: the run's first step names it
            registered = None
        key = unregistered_model(run, registered) if registered is not None else None
        if key is None:
            return super().submit_run(context)
        if key in self._instance.get_dynamic_partitions(model_partitions.name):
            self._instance.delete_dynamic_partition(model_partitions.name, key)
        where = current().models_file or "the built-in models (RAG_ASSETS_MODELS_FILE adds more)"
        self._instance.report_run_failed(run, (
            f"not started: model partition {key!r} names no entry of the model registry ({where}); registered: "
            f"{', '.join(registered)}. The partition is removed; nothing ran and nothing was written. Launch one of "
            f"the registered models, or register {key!r} first (the model_registry sensor then adds its partition)."))
        return self._instance.get_run_by_id(run.run_id)
