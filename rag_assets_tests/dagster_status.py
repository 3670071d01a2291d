"""Dagster's own per-partition stale status, as the UI computes it (the resolver the runner uses)."""

from dagster import AssetKey, DagsterInstance

from rag_assets.dagster_compat import asset_graph_of, private, stale_status_resolver
from rag_assets.definitions import ASSETS

StaleStatus = private("StaleStatus")


def resolver_for(instance: DagsterInstance, assets=ASSETS):
    return stale_status_resolver(instance, asset_graph_of(assets))


def stale_status(instance: DagsterInstance, asset: str, partition: str | None = None):
    return resolver_for(instance).get_status(AssetKey(asset), partition)


__all__ = ["StaleStatus", "resolver_for", "stale_status"]
