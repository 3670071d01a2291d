"""Partitions of the graph, in one place: chunking strategy, and embedding model x strategy.

The strategy dimension comes from the chunking registry. The model dimension is dynamic: the
model_registry sensor (and `rag-assets evaluate`) adds a partition for every entry of the model
registry, so adding a model is one registry entry.

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
    StaticPartitionsDefinition,
)

from rag_assets.lib.ingest.chunking import STRATEGIES

MODEL = "model"
STRATEGY = "strategy"

strategy_partitions = StaticPartitionsDefinition(list(STRATEGIES))
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
    return {STRATEGY if partition_key in STRATEGIES else MODEL: str(partition_key)}


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


def missing_model_partitions(instance: DagsterInstance, model_keys: Iterable[str]) -> list[str]:
    """The model keys that have no partition yet, in the given order."""
    existing = set(instance.get_dynamic_partitions(model_partitions.name))
    return [key for key in model_keys if key not in existing]


def add_model_partitions(instance: DagsterInstance, model_keys: Iterable[str]) -> list[str]:
    """Add a partition for each model key that has none; returns the keys added."""
    new = missing_model_partitions(instance, model_keys)
    if new:
        instance.add_dynamic_partitions(model_partitions.name, new)
    return new


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
