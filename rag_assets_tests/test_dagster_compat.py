"""Dagster's private API comes in through one door, and an upgrade that moves a name fails here, naming it."""

import importlib

import pytest

from rag_assets import dagster_compat


@pytest.mark.parametrize("name", sorted(dagster_compat.PRIVATE_NAMES))
def test_every_private_name_is_where_the_pinned_dagster_keeps_it(name):
    module = dagster_compat.PRIVATE_NAMES[name]
    assert hasattr(importlib.import_module(module), name), f"dagster moved {name} out of {module}: update " \
                                                            f"rag_assets/dagster_compat.py"


def test_a_moved_name_is_reported_as_moved(monkeypatch):
    monkeypatch.setitem(dagster_compat.PRIVATE_NAMES, "StaleStatus", "dagster._core.definitions.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        dagster_compat.private("StaleStatus")


def test_the_resolver_and_the_tag_work_against_the_pinned_dagster():
    from dagster import DagsterInstance, Definitions, asset

    @asset
    def lonely():
        return 1

    assert dagster_compat.data_version_tag() == "dagster/data_version"
    resolver = dagster_compat.stale_status_resolver(DagsterInstance.ephemeral(),
                                                    Definitions(assets=[lonely]).resolve_asset_graph())
    assert not dagster_compat.is_fresh(resolver.get_status(lonely.key))  # never materialised: MISSING
