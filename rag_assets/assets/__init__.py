"""The graph, one module per stage in the order data flows:
corpus -> extraction -> evaluation set -> chunks -> embeddings -> retrieval -> metrics."""
