"""The one door to Dagster's private API: every name rag_assets takes from ``dagster._*`` is taken here.

Dagster's public API has no stale-status resolver (what the UI computes for "Unsynced") and no name
for the tag an observation's data version is read from; both are in its private modules, which a
release may move without notice. ``PRIVATE_NAMES`` lists every such name with the module it comes
from; ``rag_assets_tests/test_dagster_compat.py`` imports each one, so an upgrade that moves a name
fails that test naming it, instead of an evaluation failing later. Nothing else in the project
imports from ``dagster._*`` (ruff's PLC2701 and TID251, configured in pyproject.toml, enforce it).

Checked against dagster 1.13.27, the pinned release.
"""

from __future__ import annotations

import importlib
from typing import Any

PRIVATE_NAMES: dict[str, str] = {
    "DATA_VERSION_TAG": "dagster._core.definitions.data_version",
    "StaleStatus": "dagster._core.definitions.data_version",
    "CachingStaleStatusResolver": "dagster._core.definitions.data_version",
    "AssetGraphView": "dagster._core.asset_graph_view.asset_graph_view",
    "TemporalContext": "dagster._core.asset_graph_view.asset_graph_view",
    "get_current_datetime": "dagster._time",
    "AssetGraph": "dagster._core.definitions.assets.graph.asset_graph",
    "LocalComputeLogManager": "dagster._core.storage.local_compute_log_manager",
    "CapturedLogContext": "dagster._core.storage.compute_log_manager",
    "redirect_to_file": "dagster._core.execution.compute_logs",
    "DEFAULT_DAEMON_INTERVAL_SECONDS": "dagster._daemon.controller",
    "RemoteJobOrigin": "dagster._core.remote_origin",
    "RemoteRepositoryOrigin": "dagster._core.remote_origin",
    "RegisteredCodeLocationOrigin": "dagster._core.remote_origin",
}


def private(name: str) -> Any:
    """A name of Dagster's private API, from the module ``PRIVATE_NAMES`` says it lives in."""
    return getattr(importlib.import_module(PRIVATE_NAMES[name]), name)


def poll_backfills_every(seconds: int) -> None:
    """Dagster's backfill daemon sleeps ``DEFAULT_DAEMON_INTERVAL_SECONDS`` (30 s, not configurable)
    between its iterations, so a backfill launched from the UI waits up to 30 s before its first run
    exists. The daemon reads the value when its loop starts, after the instance (and so its run
    coordinator, which calls this) was loaded in the daemon process. The same constant is the asset
    daemon's pre-sensor interval, which sensor-based automation does not use."""
    setattr(importlib.import_module(PRIVATE_NAMES["DEFAULT_DAEMON_INTERVAL_SECONDS"]), "DEFAULT_DAEMON_INTERVAL_SECONDS",
            seconds)


def data_version_tag() -> str:
    """The tag an observation event carries its data version in (what ``DataVersion`` becomes)."""
    return private("DATA_VERSION_TAG")


def stale_status_resolver(instance, asset_graph):
    """Dagster's own stale status of ``asset_graph``'s assets, per partition, as the UI computes it now."""
    view = private("AssetGraphView")(
        temporal_context=private("TemporalContext")(effective_dt=private("get_current_datetime")(), last_event_id=None),
        instance=instance, asset_graph=asset_graph)
    return private("CachingStaleStatusResolver")(instance=instance, asset_graph=asset_graph, loading_context=view)


def asset_graph_of(assets):
    """The asset graph of some asset definitions alone, without the resources a Definitions object needs."""
    return private("AssetGraph").from_assets(assets)


def job_origin(job_name: str, location_name: str, repository_name: str = "__repository__"):
    """Where a job of a code location comes from, as a queued run must record it (the queue launches
    from it); Dagster's public API builds one only inside a running code location."""
    repository = private("RemoteRepositoryOrigin")(
        code_location_origin=private("RegisteredCodeLocationOrigin")(location_name), repository_name=repository_name)
    return private("RemoteJobOrigin")(repository_origin=repository, job_name=job_name)


def is_fresh(status) -> bool:
    """Whether a stale status (``resolver.get_status``) is FRESH."""
    return status == private("StaleStatus").FRESH
