"""Embedding: the model registry (``models``), one loader a file, the content-hash embedding cache,
embedding on a Ray or Dask cluster, the ONNX graph path, and one model x strategy partition of embeddings."""
