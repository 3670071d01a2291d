"""Interrupts that Dagster would otherwise swallow.

While Dagster runs a job in process it replaces the SIGINT (and SIGTERM) handler with one that only
sets a flag (``capture_interrupts``) and raises at the next step boundary; the flag is cleared when the
run ends. A Ctrl-C that arrives after the last step's own code, while Dagster writes the run's final
events, is therefore forgotten: the run is recorded a success and the command went on to the next run
(and exited 0). ``watch()`` asks Python to write the number of every signal it receives to a socket
(``signal.set_wakeup_fd``), whichever Python handler is installed at that moment, and ``pending()``
reads it: the runner asks after every run and stops the command when an interrupt arrived.
"""

from __future__ import annotations

import signal
import socket

_INTERRUPTS = {signal.SIGINT, signal.SIGTERM}
_watch: dict[str, socket.socket] = {}
_seen = {"interrupted": False}


def watch() -> None:
    """Start noting SIGINT and SIGTERM (main thread only), from now on: each command calls it as it starts, so
    one that an earlier command of the same process received (a test, a notebook) is forgotten."""
    if "reader" in _watch:
        _drain(_watch["reader"])
        _seen["interrupted"] = False
        return
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    _watch.update(reader=reader, writer=writer)


def _drain(reader: socket.socket) -> None:
    while True:
        try:
            if not reader.recv(512):
                return
        except BlockingIOError:
            return


def pending() -> bool:
    """Whether SIGINT or SIGTERM arrived since the last ``watch()`` (it stays True once it did)."""
    reader = _watch.get("reader")
    while reader is not None and not _seen["interrupted"]:
        try:
            received = reader.recv(512)
        except BlockingIOError:
            break
        if not received:
            break
        _seen["interrupted"] = any(number in _INTERRUPTS for number in received)
    return _seen["interrupted"]
