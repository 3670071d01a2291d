"""Dagster's own per-partition stale status, as the UI computes it (through Dagster's test helper)."""

from dagster import AssetKey, DagsterInstance
from dagster._core.definitions.data_version import StaleStatus
from dagster._utils.test.data_versions import get_stale_status_resolver

from rag_assets.definitions import ASSETS


def stale_status(instance: DagsterInstance, asset: str, partition: str | None = None) -> StaleStatus:
    return get_stale_status_resolver(instance, ASSETS).get_status(AssetKey(asset), partition)


__all__ = ["StaleStatus", "stale_status"]
