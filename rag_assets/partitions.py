"""Partitions of the graph, in one place: chunking strategy, and embedding model x strategy.

Both dimensions are dynamic: the model_registry sensor (and `rag-assets evaluate`) adds a partition for
every entry of the model registry and of the strategies registry (the built-in strategies and the
strategies file's), so adding a model or a chunking strategy is one registry entry, and it appears while the
UI runs.

This module owns the dimension names: other modules build and read partition keys through
``model_strategy_key``, ``keys_of`` and ``dimension_name``, never through the literals.
"""

from __future__ import annotations

from typing import Iterable

from dagster import (
    DagsterInstance,
    DynamicPartitionsDefinition,
    MultiPartitionKey,
    MultiPartitionsDefinition,
    PartitionsDefinition,
)

from rag_assets.lib.embed.models import registry as model_registry
from rag_assets.lib.ingest.chunking import STRATEGIES, Strategy
from rag_assets.lib.ingest.strategies import DEFAULT_WINDOW
from rag_assets.lib.ingest.strategies import registry as strategy_registry
from rag_assets.settings import Settings, current

MODEL = "model"
STRATEGY = "strategy"

strategy_partitions = DynamicPartitionsDefinition(name=STRATEGY)
model_partitions = DynamicPartitionsDefinition(name=MODEL)
model_strategy_partitions = MultiPartitionsDefinition({MODEL: model_partitions, STRATEGY: strategy_partitions})
EXTERNAL = "external_retriever"
external_partitions = DynamicPartitionsDefinition(name=EXTERNAL)  # one per external retriever of the registry



def model_strategy_key(model: str, strategy: str) -> MultiPartitionKey:
    return MultiPartitionKey({MODEL: model, STRATEGY: strategy})


def keys_of(partition_key) -> dict[str, str]:
    """{dimension name: key} of a partition key of any of the graph's partitionings."""
    if hasattr(partition_key, "keys_by_dimension"):
        return dict(partition_key.keys_by_dimension)
    return {STRATEGY if partition_key in STRATEGIES or partition_key in registered_strategies() else MODEL:
            str(partition_key)}


def dimension_name(partitions_def: PartitionsDefinition) -> str:
    """The dimension name of a one-dimensional partitioning of this graph."""
    for name, single in ((STRATEGY, strategy_partitions), (MODEL, model_partitions), (EXTERNAL, external_partitions)):
        if partitions_def == single:
            return name
    raise ValueError(f"{partitions_def} is not one of the graph's one-dimensional partitionings")


def dimensions_of(partitions_def: PartitionsDefinition, partition_key: str) -> list[tuple[str, str]]:
    """(dimension, key) pairs of a partition key as a string, in the partitions definition's order."""
    if isinstance(partitions_def, MultiPartitionsDefinition):
        by_dimension = partitions_def.get_partition_key_from_str(partition_key).keys_by_dimension
        return [(d.name, by_dimension[d.name]) for d in partitions_def.partitions_defs]
    return [(dimension_name(partitions_def), partition_key)]


def registered_strategies(settings: Settings | None = None) -> dict[str, Strategy]:
    """Every registered chunking strategy (the built-in ones, then the strategies file's), sizes checked against
    the largest window of the registered models."""
    settings = settings or current()
    windows = [spec.window for spec in model_registry(settings.models_file).values() if spec.window]
    return strategy_registry(settings.strategies_file, max(windows, default=DEFAULT_WINDOW))


def missing_strategy_partitions(instance: DagsterInstance, strategies: Iterable[str]) -> list[str]:
    """The strategies that have no partition yet, in the given order."""
    return _missing(instance, strategy_partitions, strategies)


def add_strategy_partitions(instance: DagsterInstance, strategies: Iterable[str]) -> list[str]:
    """Add a partition for each strategy that has none; returns the names added."""
    return _add(instance, strategy_partitions, strategies)


def _missing(instance: DagsterInstance, partitions: DynamicPartitionsDefinition, keys: Iterable[str]) -> list[str]:
    existing = set(instance.get_dynamic_partitions(partitions.name))
    return [key for key in keys if key not in existing]


def _add(instance: DagsterInstance, partitions: DynamicPartitionsDefinition, keys: Iterable[str]) -> list[str]:
    new = _missing(instance, partitions, keys)
    if new:
        instance.add_dynamic_partitions(partitions.name, new)
    return new


def missing_model_partitions(instance: DagsterInstance, model_keys: Iterable[str]) -> list[str]:
    """The model keys that have no partition yet, in the given order."""
    return _missing(instance, model_partitions, model_keys)


def add_model_partitions(instance: DagsterInstance, model_keys: Iterable[str]) -> list[str]:
    """Add a partition for each model key that has none; returns the keys added."""
    return _add(instance, model_partitions, model_keys)


def sync_external_partitions(instance: DagsterInstance, keys: Iterable[str]) -> tuple[list[str], list[str]]:
    """One partition per registered external retriever: (added, removed). What was built for a removed
    one stays on disk; registering it again brings its partition back."""
    existing = set(instance.get_dynamic_partitions(external_partitions.name))
    wanted = list(keys)
    added = [key for key in wanted if key not in existing]
    removed = sorted(existing - set(wanted))
    if added:
        instance.add_dynamic_partitions(external_partitions.name, added)
    for key in removed:
        instance.delete_dynamic_partition(external_partitions.name, key)
    return added, removed
