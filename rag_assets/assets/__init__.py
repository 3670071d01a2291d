"""The graph, one module per stage in the order data flows:
corpus -> extraction -> eval_set (the needle set and its checks) -> chunks -> embeddings ->
retrieval -> metrics."""
