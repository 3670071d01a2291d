"""What runs by itself under the daemon: the schedules and the sensors.

- ``input_observation`` (every 15 minutes): hash the corpus folder and every model's weights.
- ``nightly_evaluation`` (the ``schedule.cron`` setting, 02:00 UTC by default): observe the inputs;
  ``nightly_completion`` (every 30 s) then rebuilds what they made stale and appends an evaluation run
  of every partition to the history (``nightly.py``).
- ``external_observation`` (every 15 minutes): ask every external retriever its index version.
- ``strategy_observation`` (every 15 minutes): version every chunking strategy (its definition, its splitter
  library's installed version).
- ``model_registry`` (every minute): a model partition for each new registry entry.
- ``rag_assets_automation`` (every 30 s): rebuild what a change made stale (``automation.py``).
"""

from dagster import (
    AssetSelection,
    AutomationConditionSensorDefinition,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    ScheduleDefinition,
    SensorResult,
    sensor,
)

from rag_assets.jobs import (
    STAGE_JOBS,
    nightly_observation,
    observe_external,
    observe_inputs,
    observe_strategies,
)
from rag_assets.lib.embed.models import registry
from rag_assets.nightly import complete_the_night
from rag_assets.partitions import (
    missing_model_partitions,
    missing_strategy_partitions,
    model_partitions,
    registered_strategies,
    strategy_partitions,
)
from rag_assets.settings import Settings, current
from rag_assets.tags import AUTOMATION_SENSOR, NIGHTLY_SCHEDULE, TRIGGER_TAG

input_observation = ScheduleDefinition(
    name="input_observation",
    job=observe_inputs,
    cron_schedule="*/15 * * * *",
    default_status=DefaultScheduleStatus.RUNNING,
    description="Hashes the corpus folder and every model's weights: a change marks what was built from them stale.",
)

strategy_observation = ScheduleDefinition(
    name="strategy_observation",
    job=observe_strategies,
    cron_schedule="*/15 * * * *",
    default_status=DefaultScheduleStatus.RUNNING,
    description="Versions every registered chunking strategy (its definition in the strategies file, its splitter "
    "library's installed version): an edited entry or an upgraded library marks exactly its partitions stale.",
)

external_observation = ScheduleDefinition(
    name="external_observation",
    job=observe_external,
    cron_schedule="*/15 * * * *",
    default_status=DefaultScheduleStatus.RUNNING,
    description="Asks every external retriever its index version (or hashes its answers to probe questions): a "
    "re-indexed store marks its runs stale, and the nightly metrics include every external retriever's rows.",
)


def nightly_schedule(cron: str, timezone: str) -> ScheduleDefinition:
    return ScheduleDefinition(
        name=NIGHTLY_SCHEDULE,
        job=nightly_observation,
        cron_schedule=cron,
        execution_timezone=timezone,
        default_status=DefaultScheduleStatus.RUNNING,
        tags={TRIGGER_TAG: "nightly"},
        description="Every night: observe the corpus and the models; the nightly_completion "
        "sensor then rebuilds what changed and appends an evaluation run to the history, even when nothing changed "
        "(a flat line is evidence too).",
    )


@sensor(minimum_interval_seconds=30, default_status=DefaultSensorStatus.RUNNING,
        jobs=STAGE_JOBS,
        description="Completes each night the nightly_evaluation schedule starts: waits for its observation and for "
        "every run in progress, rebuilds what the observation found stale (after the automation's turn), then "
        "appends one evaluation run to the history. Each skipped tick says what it waits for; the cursor starts "
        "with the night it is at.")
def nightly_completion(context):
    """Completes the night the nightly_evaluation schedule started: once its observation has ended and no run is in
    progress, rebuilds what it found stale (after giving the automation its turn), then appends the evaluation
    run (rag_assets/nightly.py)."""
    result, cursor = complete_the_night(context.instance, context.repository_def.asset_graph, context.cursor,
                                        automation_on=current().schedule.automation != "stopped")
    context.update_cursor(cursor)
    return result


@sensor(minimum_interval_seconds=60, default_status=DefaultSensorStatus.RUNNING,
        description="Every minute, reads the model registry (the built-in models and RAG_ASSETS_MODELS_FILE) and the "
        "strategies registry (the built-in strategies and RAG_ASSETS_STRATEGIES_FILE) and adds a `model` or "
        "`strategy` partition for each entry that has none: a model or strategy registered while the UI runs "
        "appears without a restart. Each tick says what it added or that every entry has its partition.")
def model_registry(context) -> SensorResult:
    """Adds a model partition for every entry of the model registry that has none yet."""
    models = registry(current().models_file)
    new = missing_model_partitions(context.instance, models)
    strategies = registered_strategies()
    new_strategies = missing_strategy_partitions(context.instance, strategies)
    if not new and not new_strategies:
        return SensorResult(skip_reason=f"every registered model and strategy has its partition "
                                        f"({len(models)} models, {len(strategies)} strategies)")
    return SensorResult(dynamic_partitions_requests=[
        *([model_partitions.build_add_request(new)] if new else []),
        *([strategy_partitions.build_add_request(new_strategies)] if new_strategies else [])])


def automation_sensor(settings: Settings) -> AutomationConditionSensorDefinition:
    """The automation sensor; ``schedule.automation=stopped`` ($RAG_ASSETS_AUTOMATION) starts the UI with it
    off (turn it on from the Automation page)."""
    return AutomationConditionSensorDefinition(
        AUTOMATION_SENSOR, target=AssetSelection.all(),
        default_status=DefaultSensorStatus.STOPPED if settings.schedule.automation == "stopped"
        else DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=30, run_tags={TRIGGER_TAG: "automation"},
        description="Rebuilds what a corpus or model change made stale, down to the metrics (rag_assets/automation.py).",
    )
