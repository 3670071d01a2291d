"""The DuckDB writers' slot: one run at a time writes ``metrics.duckdb`` (the ``duckdb_write`` pool,
one slot), so a command waits, bounded, for a live run that holds it, and frees the slot of a run
whose process is gone."""

from __future__ import annotations

import socket
import time
from typing import Callable

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

from rag_assets.lib.store.paths import pid_alive
from rag_assets.tags import (
    COMMAND_TAG,
    DUCKDB_WRITE_POOL,
    HOST_TAG,
    PID_TAG,
    TRIGGER_TAG,
)

SLOT_WAIT_ENV_VAR = "RAG_ASSETS_SLOT_WAIT"  # the settings' instance.slot_wait, named in messages


class SlotBusy(RuntimeError):
    """A live run has held the DuckDB writers' slot longer than this run would wait."""


Withdraw = Callable[[str], list[str]]  # undoes what a run that is recorded failed had made current


def _nothing_to_withdraw(_run_id: str) -> list[str]:
    return []


def wait_for_writers_slot(instance: DagsterInstance, limit: float, progress: Callable[[str], None],
                          withdraw: Withdraw = _nothing_to_withdraw) -> None:
    """Wait while a live run holds the writers' slot, at most ``limit`` seconds, saying which run holds
    it; then SlotBusy. Slots of runs whose process died meanwhile are released (and ``withdraw`` asked)."""
    deadline, told = time.monotonic() + limit, False
    while (holder := slot_holder(instance, DUCKDB_WRITE_POOL)) is not None:
        if not told:
            progress(f"waiting (at most {limit:.0f} s, {SLOT_WAIT_ENV_VAR}) for {holder}, which holds the DuckDB "
                     "writers' slot")
            told = True
        if time.monotonic() >= deadline:
            raise SlotBusy(f"the DuckDB writers' slot is still held after {limit:.0f} s by {holder}. Wait for it "
                           f"to finish, or stop that process (kill its pid); the next rag-assets run releases the "
                           f"slot of a run whose process is gone")
        time.sleep(1.0)
        for message in release_slots_of_dead_runs(instance, withdraw):
            progress(message)


def release_slots_of_dead_runs(instance: DagsterInstance, withdraw: Withdraw = _nothing_to_withdraw) -> list[str]:
    """Free the concurrency slots (the DuckDB writers' pool above all) held by runs that can no longer
    release them: first every unfinished run of a `rag-assets` process of this machine that is gone
    (killed, or stopped by a full disk) is recorded failed (``fail_runs_of_gone_processes``, which asks
    ``withdraw``), then the slots of runs that ended are freed. Runs of other processes (the daemon's) are
    left to Dagster's run monitoring. Returns what was done, one line each."""
    storage = instance.event_log_storage
    released = fail_runs_of_gone_processes(instance, withdraw)
    for pool in storage.get_concurrency_keys():
        info = storage.get_concurrency_info(pool)
        for run_id in sorted({s.run_id for s in info.claimed_slots} | {s.run_id for s in info.pending_steps}):
            run = instance.get_run_by_id(run_id)
            if run is not None and not run.is_finished:
                continue  # alive: the gone ones were recorded failed above
            storage.free_concurrency_slots_for_run(run_id)
            what = "the DuckDB writers' slot" if pool == DUCKDB_WRITE_POOL else f"the {pool} slot"
            released.append(f"released {what} held by run {run_id}, whose process is gone")
    return released


def slot_holder(instance: DagsterInstance, pool: str) -> str | None:
    """Who holds the slots of ``pool`` now (run id, job, command, process and host), or None."""
    storage = instance.event_log_storage
    if pool not in storage.get_concurrency_keys():
        return None
    info = storage.get_concurrency_info(pool)
    claimed = info.claimed_slots
    if not claimed or len(claimed) < max(1, info.limit or info.slot_count or 1):
        return None
    run = instance.get_run_by_id(claimed[0].run_id)
    if run is None:
        return f"run {claimed[0].run_id}"
    tags = run.tags
    process = f"process {tags[PID_TAG]} on {tags.get(HOST_TAG, '?')}" if PID_TAG in tags else "the Dagster daemon or UI"
    command = tags.get(COMMAND_TAG, tags.get(TRIGGER_TAG, "a run"))
    return f"run {run.run_id} ({run.job_name}, {command}, {process})"


def run_process_alive(tags: dict) -> bool:
    """Whether the run's process may still be running: True unless it is a `rag-assets` process of
    this machine that no longer exists (or whose pid now names another program)."""
    if PID_TAG not in tags or tags.get(HOST_TAG) != socket.gethostname():
        return True
    try:
        pid = int(tags[PID_TAG])
    except ValueError:
        return False
    return pid_alive(pid, command_contains=b"rag")


UNFINISHED = [DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]


def fail_unfinished_runs_of(instance: DagsterInstance, pid: int, why: str) -> list[str]:
    """Record as failed every run of the `rag-assets` process ``pid`` of this machine that has not
    ended (created, starting or started), so that the UI's run list shows no run in progress that is
    not. Returns the ids of the runs it failed."""
    failed = []
    for run in instance.get_runs(RunsFilter(tags={PID_TAG: str(pid), HOST_TAG: socket.gethostname()},
                                            statuses=UNFINISHED)):
        instance.report_run_failed(run, why)
        failed.append(run.run_id)
    return failed


def fail_runs_of_gone_processes(instance: DagsterInstance, withdraw: Withdraw = _nothing_to_withdraw) -> list[str]:
    """Record as failed the unfinished runs of `rag-assets` processes of this machine that are gone
    (killed with kill -9, say), whether or not they held a slot, and ask ``withdraw`` for each. Returns
    what was done, one line each."""
    said = []
    for run in instance.get_runs(RunsFilter(statuses=UNFINISHED)):
        if PID_TAG in run.tags and run.tags.get(HOST_TAG) == socket.gethostname() and not run_process_alive(run.tags):
            instance.report_run_failed(run, f"its process {run.tags[PID_TAG]} is gone (killed or stopped); marked "
                                            "failed by the next rag-assets command")
            said.append(f"run {run.run_id} ({run.job_name}) of process {run.tags[PID_TAG]}, which is gone, is "
                        "recorded as failed")
            said += withdraw(run.run_id)
    return said
