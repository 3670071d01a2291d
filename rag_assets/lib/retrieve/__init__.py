"""Retrieval: the retrievers (``dense``, ``ann``, ``bm25``, ``fusion``, ``late_interaction``,
``cross_encoder``, a module each), the engine that runs them in order for every query (``engine``),
and one model x strategy partition of judged retrieval rows (``runs``)."""
