"""Dagster's own per-partition stale status, as the UI computes it (the resolver the runner uses)."""

from dagster import AssetKey, DagsterInstance
from dagster._core.definitions.assets.graph.asset_graph import AssetGraph
from dagster._core.definitions.data_version import StaleStatus

from rag_assets.definitions import ASSETS
from rag_assets.runner import stale_status_resolver


def resolver_for(instance: DagsterInstance, assets=ASSETS):
    return stale_status_resolver(instance, AssetGraph.from_assets(assets))


def stale_status(instance: DagsterInstance, asset: str, partition: str | None = None) -> StaleStatus:
    return resolver_for(instance).get_status(AssetKey(asset), partition)


__all__ = ["StaleStatus", "resolver_for", "stale_status"]
