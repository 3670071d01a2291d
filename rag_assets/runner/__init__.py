"""Running the graph for a command: the named jobs in data-flow order with up-to-date partitions skipped
(``evaluation``, ``freshness``), the servers the settings name checked before anything runs
(``services``), the DuckDB writers' slot (``writers_slot``), interrupts (``interrupts``), and what a failed
run says to a person (``failures``). The Dagster instance itself is ``rag_assets/instance/``."""
