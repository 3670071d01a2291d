"""A long-running server command (``rag-assets ui``: ``dagster dev``, its webserver, daemon and code servers)
that stops when it is told to, however it is told.

The server runs in a process group of its own, under this process. Ctrl-C or SIGTERM reaching this process
(sent to it alone, or to its whole process group, once or many times) is passed on once, as the Ctrl-C the
server knows how to shut down on, to the server's whole group; whatever of that group still runs ``grace``
seconds later is killed. So a SIGTERM from a service manager, a ``kill`` of the group from a newcomer, a
terminal's Ctrl-C and a second impatient Ctrl-C all end with nothing left running, within the grace.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

GRACE_SECONDS = 30.0  # from the first interrupt to SIGKILL of what is left (docs/ui.md states it)


@dataclass
class Stopped:
    """How a supervised server ended: its exit status, whether an interrupt stopped it, and whether what
    was left of it had to be killed after the grace."""

    status: int
    interrupted: bool = False
    killed: bool = False


def group_alive(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still running. A zombie does not count: an orphan that ended is
    reaped by init, which may take its time (or, as PID 1 of a container, never do it)."""
    proc = Path("/proc")
    if not proc.is_dir():  # no /proc to read: whether the group can be signalled at all
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                state, _, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
            except (OSError, ValueError):
                continue
            if int(group) == pgid and state != "Z":
                return True
    return False


def supervise(command: Sequence[str], grace: float = GRACE_SECONDS, poll: float = 0.2, **popen) -> Stopped:
    """Run ``command`` in a process group of its own until it and every process it started have ended. An
    interrupt (SIGINT or SIGTERM to this process) is passed on to that group once, as SIGINT; what of the group
    still runs ``grace`` seconds after the first interrupt (or after the server itself ended, leaving children
    behind) is killed. This process's handlers are restored before it returns."""
    received: list[float] = []

    def interrupt(signum, frame) -> None:
        if not received:
            received.append(time.monotonic())

    previous = {number: signal.signal(number, interrupt) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        # the handlers above are Python functions, which exec resets to the default: the server starts with
        # both signals at their defaults even where this process was started with Ctrl-C ignored
        process = subprocess.Popen(list(command), process_group=0, **popen)
        passed_on, ended_at = False, None
        while True:
            status = process.poll()
            if received and not passed_on:
                passed_on = True
                _signal_group(process.pid, signal.SIGINT)
            if status is not None and ended_at is None:
                ended_at = time.monotonic()
            if status is not None and not group_alive(process.pid):
                return Stopped(status, interrupted=bool(received))
            since = [moment for moment in (received[0] if received else None, ended_at) if moment is not None]
            if since and time.monotonic() - min(since) > grace:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()
                _reap_group(process.pid, poll)
                return Stopped(process.returncode, interrupted=bool(received), killed=True)
            time.sleep(poll)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _signal_group(pgid: int, number: int) -> None:
    try:
        os.killpg(pgid, number)
    except ProcessLookupError:
        pass


def _reap_group(pgid: int, poll: float, seconds: float = 15.0) -> None:
    """Waits (at most ``seconds``) until the killed group is gone: its orphans are reaped by init, not at once."""
    deadline = time.monotonic() + seconds
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(poll)
