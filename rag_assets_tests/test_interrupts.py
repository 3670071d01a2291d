"""No interrupt is lost: one that Python raises inside a finalizer (where it is only printed, "Exception
ignored in ...") is delivered again, so the command stops instead of going on to record its results."""

import subprocess
import sys

import pytest

PROGRAM = """
import gc, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal starts it (a test worker ignores Ctrl-C)
{install}

class Finalized:
    def __del__(self):  # where a signal lands when the garbage collector runs a callback
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):  # the handler runs here, inside the finalizer
            pass

try:
    Finalized()
    gc.collect()
    time.sleep(2)  # the run going on
    print("went on and recorded its results")
except KeyboardInterrupt:
    print("stopped")
"""


@pytest.mark.parametrize("install, said", [
    ("from rag_assets.cli import honour_interrupts; honour_interrupts()", "stopped"),
    ("", "went on and recorded its results"),  # without it, the interrupt is lost: the case it fixes
])
def test_an_interrupt_raised_in_a_finalizer_is_delivered_again(install, said):
    result = subprocess.run([sys.executable, "-c", PROGRAM.format(install=install)], capture_output=True, text=True,
                            timeout=60)
    assert result.stdout.strip() == said, result.stderr
    if install:
        assert "Exception ignored" not in result.stderr  # nothing printed: it was delivered, not lost


def test_dagsters_interrupt_counts_as_one():
    from dagster import DagsterExecutionInterruptedError

    from rag_assets.cli import is_interrupt

    assert is_interrupt(DagsterExecutionInterruptedError()) and is_interrupt(KeyboardInterrupt())
    assert not is_interrupt(ValueError("no")) and not is_interrupt(None)


def test_a_command_started_with_ctrl_c_ignored_takes_it_again():
    """A background shell starts a command with SIGINT ignored; rag-assets is stopped by it all the same."""
    program = ("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
               "from rag_assets.cli import honour_interrupts; honour_interrupts()\n"
               "try:\n    signal.raise_signal(signal.SIGINT)\n    time.sleep(2)\n    print('went on')\n"
               "except KeyboardInterrupt:\n    print('stopped')\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "stopped", result.stderr


SWALLOWED = """
import os, signal, time
from dagster import DagsterInstance, asset, materialize
from rag_assets.dagster_compat import private
{install}

@asset
def ends_while_dagster_holds_interrupts():
    # what Dagster does while it writes a run's last events: a Ctrl-C then only sets a flag, cleared at the end
    from dagster._utils.interrupts import capture_interrupts  # noqa: PLC2701 - the mechanism under test
    with capture_interrupts():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
    return 1

result = materialize([ends_while_dagster_holds_interrupts], instance=DagsterInstance.ephemeral())
from rag_assets.runner.interrupts import pending
print("recorded", "success" if result.success else "failure", "pending", pending())
"""


@pytest.mark.parametrize("install, said", [
    ("from rag_assets.cli import honour_interrupts; honour_interrupts()", "recorded success pending True"),
    ("", "recorded success pending False"),  # without the watch, the run is a success and the Ctrl-C is gone
])
def test_a_ctrl_c_that_dagster_swallows_at_the_end_of_a_run_is_still_seen(install, said):
    result = subprocess.run([sys.executable, "-c", SWALLOWED.format(install=install)], capture_output=True,
                            text=True, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == said, result.stderr[-3000:]


SAID_THEN_TORN_DOWN = """
import gc, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from rag_assets import cli
cli.honour_interrupts()

class Finalized:
    def __del__(self):  # a connection finalised as the interrupted run is torn down, after the line was said
        signal.raise_signal(signal.SIGINT)
        for _ in range(1000):
            pass

{body}
"""


@pytest.mark.parametrize("body", [
    # the command said its line; a finalizer then swallowed an interrupt; the re-delivery would land in shutdown
    "status = cli.interrupted('rag-assets evaluate')\nFinalized(); gc.collect()\ntime.sleep(0.5)\nsys.exit(status)",
    # through main: an interrupt raised after the command had decided its status does not change it
    "def command(argv):\n    status = cli.interrupted('rag-assets evaluate')\n    signal.raise_signal(signal.SIGINT)\n"
    "    return status\ncli.run_command = command\nstatus = cli.main([])\ntime.sleep(0.5)\nsys.exit(status)",
    # a rag-assets process: an interrupt after main returned its status (a re-delivery already on its way as the
    # command decided, CI's case) lands in its shutdown; the process ends with the status said, not by the signal
    "from rag_assets.environment import started_as_command\nstarted_as_command()\n"
    "cli.run_command = lambda argv: cli.interrupted('rag-assets evaluate')\nstatus = cli.main([])\n"
    "signal.raise_signal(signal.SIGINT)\ntime.sleep(0.5)\nsys.exit(status)",
    # an interrupt that lands while the command decides how it ends (before its line): main says the line
    "def command(argv):\n    raise KeyboardInterrupt\ncli.run_command = command\nsys.exit(cli.main([]))",
], ids=["re-delivery-after-the-line", "second-interrupt-in-main", "interrupt-in-the-shutdown-of-a-command",
        "interrupt-while-deciding"])
def test_a_command_that_said_it_was_interrupted_exits_130_not_by_the_signal(body):
    result = subprocess.run([sys.executable, "-c", SAID_THEN_TORN_DOWN.format(body=body)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 130, (result.returncode, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr  # the one line, said once
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, result.stderr


WATCHED_TWICE = """
import signal
from rag_assets.runner.interrupts import pending, watch
signal.signal(signal.SIGTERM, lambda *_: None)  # a handler that swallows it, as Dagster's does during a run
signal.signal(signal.SIGUSR1, lambda *_: None)
watch()
print(pending())
signal.raise_signal(signal.SIGTERM)
print(pending(), pending())  # it stays seen
watch()  # the next command of the same process (a test, a notebook) starts with nothing pending
print(pending())
signal.raise_signal(signal.SIGUSR1)
print(pending())  # only SIGINT and SIGTERM count
"""


def test_an_interrupt_is_pending_until_the_next_command_starts_watching():
    result = subprocess.run([sys.executable, "-c", WATCHED_TWICE], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True", "True", "False", "False"]


POOL_LOG = """
import logging, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
{install}
logging.basicConfig()  # a library configured logging: records reach the root's handler, not lastResort
pool = logging.getLogger("sqlalchemy.pool.impl.NullPool")
try:
    raise RuntimeError("not an interrupt")
except RuntimeError:
    pool.error("Exception closing connection before", exc_info=True)
try:
    os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    pass
try:
    raise ValueError("closed in the middle of a query")
except ValueError:
    pool.error("Exception closing connection after", exc_info=True)
logging.getLogger("rag_assets").error("our own record")
"""


@pytest.mark.parametrize("install, after", [("", True), ("from rag_assets.cli import honour_interrupts; "
                                                         "honour_interrupts()", False)])
def test_sqlalchemys_closing_traceback_after_an_interrupt_is_not_printed_when_logging_is_configured(install, after):
    stderr = subprocess.run([sys.executable, "-c", POOL_LOG.format(install=install)], capture_output=True,
                            text=True, timeout=60).stderr
    assert "Exception closing connection before" in stderr and "our own record" in stderr
    assert ("Exception closing connection after" in stderr) is after
