"""The Dagster instance of a storage folder, and what its daemon and webserver load from rag_assets:
``dagster_yaml`` (the instance's ``dagster.yaml``, written for the settings, and the instance opened on it),
``run_coordinator`` (the queued run coordinator that registers a run's model partition) and
``compute_logs`` (the compute-log manager)."""
