"""Running the graph from the command line: the Dagster instance under the storage folder
(``instance``), the named jobs in data-flow order with up-to-date partitions skipped
(``evaluation``, ``freshness``), the DuckDB writers' slot (``writers_slot``), and what a failed
run says to a person (``failures``)."""
