"""Whether a job's partition is up to date, so that ``rag-assets evaluate`` need not run it again.

Up to date means: Dagster reports every asset of the job fresh for that partition (its inputs' data
versions, which are content hashes, are those it was built from), it was built with the same
settings (a fingerprint kept as a run tag) and every check of that run passed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from dagster import AssetRecordsFilter, DagsterEventType, DagsterInstance, Definitions

from rag_assets.dagster_compat import is_fresh, stale_status_resolver
from rag_assets.lib.embed.models import registry
from rag_assets.resources import EXECUTION_ONLY, EmbeddingModels, RagSettings
from rag_assets.tags import SETTINGS_TAG


@dataclass
class CheckOutcome:
    asset: str
    name: str
    passed: bool
    severity: str  # "ERROR" or "WARN"

    @property
    def verdict(self) -> str:
        return "passed" if self.passed else "warn" if self.severity == "WARN" else "FAILED"


@dataclass
class EvaluationOutcome:
    """What a whole evaluation materialised: the inputs' summaries (from the assets' own metadata)
    and every check result, for the command line to print."""

    extraction: dict = field(default_factory=dict)
    eval_set: dict = field(default_factory=dict)
    checks: list[CheckOutcome] = field(default_factory=list)
    partitions: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)  # jobs not run again: nothing they read had changed


def checks_of(result) -> list[CheckOutcome]:
    """The check outcomes of a finished run (``execute_in_process``'s result)."""
    return [CheckOutcome(c.asset_key.to_user_string(), c.check_name, c.passed, c.severity.value)
            for c in result.get_asset_check_evaluations()]


def metadata_of(result, asset: str) -> dict:
    """The metadata a run's materialisation of ``asset`` carries, as plain values."""
    materializations = result.asset_materializations_for_node(asset)
    return {k: v.value for k, v in materializations[0].metadata.items()} if materializations else {}


# where the outputs are kept, not what they are: a storage folder copied or restored elsewhere is as warm there,
# and an evaluation published to another database (publish.url) is the same evaluation
WHERE_OUTPUTS_GO = ("home", "publish")


def settings_fingerprint(settings: RagSettings, models: EmbeddingModels | None = None) -> str:
    """16 hex digits over every setting and every registry entry: what a run was built with (less the
    settings that choose only where or in what steps it runs, ``EXECUTION_ONLY``, and where its outputs are
    kept, ``WHERE_OUTPUTS_GO``)."""
    entries = {key: repr(spec) for key, spec in sorted(registry(settings.models_file).items())}
    if models is not None:
        entries["resource"] = repr(sorted(models.model_dump().items()))
    payload = json.dumps({"settings": settings.model_dump(exclude={*EXECUTION_ONLY, *WHERE_OUTPUTS_GO}), "models": entries},
                         sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def current_checks(definitions: Definitions, instance: DagsterInstance, fingerprint: str, job: str,
                   partition_key=None) -> list[CheckOutcome] | None:
    """The check outcomes of the runs that built the job's assets for ``partition_key``, if every
    asset is fresh by Dagster's own status, was built with the settings of ``fingerprint``, and passed
    its checks; else None."""
    job_def = definitions.resolve_job_def(job)
    keys = sorted(job_def.asset_layer.selected_asset_keys, key=lambda k: k.to_user_string())
    resolver = stale_status_resolver(instance, definitions.resolve_asset_graph())
    runs = set()
    for key in keys:
        if not is_fresh(resolver.get_status(key, str(partition_key) if partition_key is not None else None)):
            return None
        records = instance.fetch_materializations(
            AssetRecordsFilter(asset_key=key, asset_partitions=[str(partition_key)] if partition_key else None),
            limit=1).records
        if not records:
            return None
        runs.add(records[0].run_id)
    outcomes = []
    for run_id in sorted(runs):
        run = instance.get_run_by_id(run_id)
        if run is None or run.tags.get(SETTINGS_TAG) != fingerprint:
            return None
        for entry in instance.all_logs(run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION):
            evaluation = entry.dagster_event.event_specific_data
            if evaluation.asset_key not in keys:
                continue
            outcome = CheckOutcome(evaluation.asset_key.to_user_string(), evaluation.check_name,
                                   evaluation.passed, evaluation.severity.value)
            if outcome.verdict == "FAILED":
                return None
            outcomes.append(outcome)
    return outcomes
