"""The names that runs, assets and the command line share: run tags and the writers' pool.

Dagster tags its own runs too (``dagster/...``); these are rag_assets'. Filter the UI's run list by
one (``rag_assets/trigger=nightly``) to see one kind of run.
"""

TRIGGER_TAG = "rag_assets/trigger"  # what started a run: cli, nightly, automation
COMMAND_TAG = "rag_assets/command"  # the rag-assets command: evaluate, backfill
MODELS_TAG = "rag_assets/models"  # the models a command ran, comma-separated
STRATEGIES_TAG = "rag_assets/strategies"  # the strategies a command ran, comma-separated
SETTINGS_TAG = "rag_assets/settings"  # fingerprint of the settings and model registry a run was built with
PID_TAG = "rag_assets/pid"  # the process that runs a `rag-assets` run, to tell a dead one
HOST_TAG = "rag_assets/host"

# DuckDB allows one writer per file: the asset that writes metrics.duckdb runs in this pool, whose one
# slot the instance's dagster.yaml sets (default_limit: 1)
DUCKDB_WRITE_POOL = "duckdb_write"
