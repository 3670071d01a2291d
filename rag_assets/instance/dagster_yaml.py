"""The Dagster instance a storage folder uses: its dagster.yaml, and the instance opened on it.

Embedded by default: SQLite under ``<home>/dagster``, nothing to run. With ``DAGSTER_PG_URL`` set
(``postgresql+psycopg2://user:password@host:port/database``), a production instance instead: run,
event-log and schedule storage in PostgreSQL (dagster-postgres). Either way runs started by the UI,
sensors, schedules and backfills go through the queued run coordinator, which starts at most
``RAG_ASSETS_MAX_RUNS`` runs at once (default: one per core, at most 4; each with its share of the
cores, ``RAG_ASSETS_RUN_THREADS``), and the DuckDB writers' pool has one slot, so
however many runs a backfill starts, one at a time writes ``metrics.duckdb``.

The file is rewritten to match the environment only while it is the one rag_assets wrote (its first
line says so); a dagster.yaml of your own is left as it is.
"""

from __future__ import annotations

import fcntl
from pathlib import Path

from dagster import DagsterInstance

from rag_assets.environment import use_dagster_home
from rag_assets.lib.store import paths
from rag_assets.settings import Instance, current, defaults

POSTGRES_URL_ENV_VAR = "DAGSTER_PG_URL"  # the settings' instance.postgres_url, named in dagster.yaml
MAX_RUNS_ENV_VAR = "RAG_ASSETS_MAX_RUNS"
DEFAULT_MAX_RUNS = defaults(Instance).max_runs
MARKER = "# Written by rag_assets"

_TELEMETRY = "telemetry:\n  enabled: false\n"
# a step's stdout and stderr in the instance's files (the UI shows them), with no console-mirroring child
# processes for a Ctrl-C to reach (instance/compute_logs.py)
_COMPUTE_LOGS = """compute_logs:
  module: rag_assets.instance.compute_logs
  class: StepLogsToFiles
  config:
    base_dir: {base_dir}
"""


def instance_yaml(postgres: bool, max_runs: int = DEFAULT_MAX_RUNS, folder: Path | None = None) -> str:
    """dagster.yaml for the embedded (SQLite) instance, or the PostgreSQL one with queued runs."""
    concurrency = f"""# Runs started by the UI, sensors, schedules and backfills wait in a queue; the daemon (`dagster dev`,
# or `dagster-daemon run`) starts at most max_concurrent_runs of them at once ({MAX_RUNS_ENV_VAR}).
# Dagster's QueuedRunCoordinator, which also tags each run with what started it and refuses a run for a
# model partition that names no registry entry (rag_assets/instance/run_coordinator.py).
run_coordinator:
  module: rag_assets.instance.run_coordinator
  class: RagRunCoordinator
  config:
    dequeue_interval_seconds: 1
concurrency:
  runs:
    max_concurrent_runs: {max_runs}
  # DuckDB allows one writer per file: the pool of the asset that writes it gets one slot.
  pools:
    default_limit: 1
"""
    logs = _COMPUTE_LOGS.format(base_dir=Path(folder) / "storage") if folder is not None else ""
    if not postgres:
        return f"{MARKER} (embedded SQLite instance; set {POSTGRES_URL_ENV_VAR} for PostgreSQL).\n{concurrency}{logs}{_TELEMETRY}"
    return f"""{MARKER} (PostgreSQL instance, because {POSTGRES_URL_ENV_VAR} is set).
storage:
  postgres:
    postgres_url:
      env: {POSTGRES_URL_ENV_VAR}
{concurrency}{logs}{_TELEMETRY}"""


def ensure_dagster_home(home: Path) -> Path:
    """The Dagster instance folder under the storage folder, with the dagster.yaml the environment asks for."""
    folder = paths.dagster_home(home)
    folder.mkdir(parents=True, exist_ok=True)
    paths.keep_scratch_in(home)  # the libraries' caches and temporary files in the storage folder, not the user's
    config = folder / "dagster.yaml"
    configured = current().instance
    wanted = instance_yaml(bool(configured.postgres_url), configured.max_runs, folder.resolve())
    written = config.read_text() if config.exists() else None
    if written is None or (written.startswith(MARKER) and written != wanted):
        config.write_text(wanted)
    return folder


def default_instance(home: Path) -> DagsterInstance:
    """The instance under the storage folder. Opening it creates (or migrates) its SQLite storage,
    which two processes must not do at once (alembic fails), so that is done under a file lock."""
    folder = ensure_dagster_home(home)
    use_dagster_home(folder)
    with open(folder / ".instance.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        instance = DagsterInstance.get()
        instance.get_runs(limit=1)  # the run, event log and schedule storages are created now, not later
        instance.event_log_storage.get_concurrency_keys()
        if instance.schedule_storage:
            instance.schedule_storage.all_instigator_state()
    return instance
