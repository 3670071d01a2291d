"""The names that runs, assets and the command line share: run tags and the writers' pool.

Dagster tags its own runs too (``dagster/...``); these are rag_assets'. Filter the UI's run list by
one (``rag_assets/trigger=nightly``) to see one kind of run.
"""

TRIGGER_TAG = "rag_assets/trigger"  # what started a run: cli, nightly, automation, ui, schedule, sensor
COMMAND_TAG = "rag_assets/command"  # the rag-assets command: evaluate, backfill
MODELS_TAG = "rag_assets/models"  # the models a command ran, comma-separated
STRATEGIES_TAG = "rag_assets/strategies"  # the strategies a command ran, comma-separated
SETTINGS_TAG = "rag_assets/settings"  # fingerprint of the settings and model registry a run was built with
PID_TAG = "rag_assets/pid"  # the process that runs a `rag-assets` run, to tell a dead one
HOST_TAG = "rag_assets/host"

# DuckDB allows one writer per file: the asset that writes metrics.duckdb runs in this pool, whose one
# slot the instance's dagster.yaml sets (default_limit: 1)
DUCKDB_WRITE_POOL = "duckdb_write"

# Dagster's own tags, read to tell what started a run that carries no trigger tag of ours
_DAGSTER_SCHEDULE = "dagster/schedule_name"
_DAGSTER_SENSOR = "dagster/sensor_name"
_DAGSTER_AUTOMATION = ("dagster/from_automation_condition", "dagster/auto_materialize")
AUTOMATION_SENSOR = "rag_assets_automation"
NIGHTLY_SCHEDULE = "nightly_evaluation"


def trigger_of(tags: dict[str, str]) -> str | None:
    """The trigger tag a run submitted to the instance's queue should carry, from Dagster's tags: the
    nightly schedule ``nightly``, another schedule ``schedule``, the automation ``automation``, another
    sensor ``sensor``, and anything else, a launch from the UI (its Materialize button, the launchpad, a
    backfill) or its GraphQL API, ``ui``. None when the run already carries one (``rag-assets`` runs,
    and runs of the schedules and sensors that set it)."""
    if TRIGGER_TAG in tags:
        return None
    if tags.get(_DAGSTER_SCHEDULE) == NIGHTLY_SCHEDULE:
        return "nightly"
    if _DAGSTER_SCHEDULE in tags:
        return "schedule"
    if tags.get(_DAGSTER_SENSOR) == AUTOMATION_SENSOR or any(tag in tags for tag in _DAGSTER_AUTOMATION):
        return "automation"
    if _DAGSTER_SENSOR in tags:
        return "sensor"
    return "ui"
NIGHTLY_TICK_TAG = "rag_assets/nightly"  # the scheduled time of the night a nightly run belongs to
