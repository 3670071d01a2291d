"""Partitions of the graph, in one place: chunking strategy, and embedding model x strategy.

The strategy dimension comes from the chunking registry. The model dimension is dynamic: the
model_registry sensor (and `rag-assets evaluate`) adds a partition for every entry of the model
registry, so adding a model is one registry entry.
"""

from dagster import DynamicPartitionsDefinition, MultiPartitionsDefinition, StaticPartitionsDefinition

from rag_assets.lib.chunking import STRATEGIES

MODEL_PARTITIONS_NAME = "model"

strategy_partitions = StaticPartitionsDefinition(list(STRATEGIES))
model_partitions = DynamicPartitionsDefinition(name=MODEL_PARTITIONS_NAME)
model_strategy_partitions = MultiPartitionsDefinition(
    {"model": model_partitions, "strategy": strategy_partitions}
)
