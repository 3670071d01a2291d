"""Partitions of the graph, in one place: chunking strategy, and embedding model x strategy."""

from dagster import MultiPartitionsDefinition, StaticPartitionsDefinition

from rag_assets.lib.chunking import STRATEGIES
from rag_assets.lib.embedding import MODELS

strategy_partitions = StaticPartitionsDefinition(list(STRATEGIES))
model_partitions = StaticPartitionsDefinition(list(MODELS))
model_strategy_partitions = MultiPartitionsDefinition(
    {"model": model_partitions, "strategy": strategy_partitions}
)
