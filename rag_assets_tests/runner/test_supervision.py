"""A supervised server stops however it is told: an interrupt to the supervisor is passed on once as SIGINT to
the server's own process group, and what is left after the grace is killed (real child processes, a grace of a
second or two)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

from rag_assets.runner.supervision import group_alive, supervise

# a server that starts a child of its own, writes both pids, and ends on SIGINT (or, told to, ignores it)
SERVER = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    ignore = sys.argv[2] == "ignore"
    child = subprocess.Popen([sys.executable, "-c", "import signal, time\\n"
                              + ("signal.signal(signal.SIGINT, signal.SIG_IGN)\\n" if ignore else "")
                              + "time.sleep(600)"])
    if ignore:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    with open(sys.argv[1], "w") as out:
        out.write(f"{os.getpid()} {child.pid} {signal.getsignal(signal.SIGTERM)}")
    try:
        time.sleep(600)
    except KeyboardInterrupt:
        child.send_signal(signal.SIGINT)
        child.wait()
        sys.exit(0)
""")


# the supervisor under test, in a process of its own: the signals it is sent never reach the test's process,
# whose interrupt watch (rag_assets.runner.interrupts) would note them and stop every later run in it
SUPERVISOR = textwrap.dedent("""
    import json, os, signal, sys, threading, time
    from pathlib import Path
    from rag_assets.runner.supervision import supervise
    server, pids, mode, number, times, grace = sys.argv[1:7]
    pids, number, times = Path(pids), int(number), int(times)
    found = []

    def send():
        while not (pids.exists() and pids.read_text().count(" ") == 2):
            time.sleep(0.05)
        found.extend(int(pid) for pid in pids.read_text().split()[:2])
        for _ in range(times):
            os.kill(os.getpid(), number)
            time.sleep(0.1)

    threading.Thread(target=send, daemon=True).start()
    before = signal.getsignal(signal.SIGTERM)
    started = time.monotonic()
    stopped = supervise([sys.executable, "-c", server, str(pids), mode], grace=float(grace))
    print(json.dumps({"seconds": time.monotonic() - started, "status": stopped.status,
                      "interrupted": stopped.interrupted, "killed": stopped.killed, "found": found,
                      "handler_back": signal.getsignal(signal.SIGTERM) is before}))
""")


def supervised(tmp_path, mode: str, number: int, times: int = 1, grace: float = 30) -> dict:
    """Supervise SERVER in a child process that interrupts itself ``times`` times with ``number`` once the
    server has started; what the supervisor returned, how long it took and the server's and its child's pids."""
    done = subprocess.run([sys.executable, "-c", SUPERVISOR, SERVER, str(tmp_path / "pids"), mode, str(number),
                           str(times), str(grace)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_sigterm_to_the_supervisor_stops_the_server_and_its_child_well_within_the_grace(tmp_path):
    stopped = supervised(tmp_path, "obey", signal.SIGTERM, times=3)  # an impatient newcomer: three SIGTERMs
    assert stopped["seconds"] < 30  # stopped by its own shutdown, not by the kill after the grace
    assert stopped["interrupted"] and not stopped["killed"] and stopped["status"] == 0
    assert not group_alive(stopped["found"][0])
    assert stopped["handler_back"]  # the supervisor's own handler is back
    assert (tmp_path / "pids").read_text().split()[2] == str(int(signal.SIG_DFL))  # the server started with the default


def test_a_server_that_ignores_the_interrupt_is_killed_with_its_child_after_the_grace(tmp_path):
    stopped = supervised(tmp_path, "ignore", signal.SIGINT, grace=1.0)
    assert stopped["seconds"] >= 1.0
    assert stopped["interrupted"] and stopped["killed"] and stopped["status"] == -signal.SIGKILL
    assert not group_alive(stopped["found"][0])
    for pid in stopped["found"]:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] if os.path.exists(f"/proc/{pid}") else "gone"
        assert state in ("Z", "gone"), (pid, state)


def test_a_server_that_ends_by_itself_gives_its_status_and_its_left_children_are_killed(tmp_path):
    ends = ("import subprocess, sys\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
            "sys.exit(3)")
    stopped = supervise([sys.executable, "-c", ends], grace=1.0)
    assert stopped.status == 3 and not stopped.interrupted and stopped.killed
    quick = supervise([sys.executable, "-c", "import sys; sys.exit(4)"], grace=5)
    assert (quick.status, quick.interrupted, quick.killed) == (4, False, False)


def test_group_alive_does_not_count_a_group_that_has_ended():
    assert group_alive(os.getpgid(0))
    assert not group_alive(2 ** 22 + 12345)
