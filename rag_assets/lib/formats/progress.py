"""Progress of a long step in words: done of total, and the time left at the pace so far.

A step reports through ``Progress``: each report is written to the step's own log and to the Python
logger ``rag_assets.progress``, which the command line prints (the UI shows the step's log). Reports are
at most one every ``every`` seconds, and always the last.
"""

from __future__ import annotations

import logging
import time
from typing import Callable

LOGGER = "rag_assets.progress"


def eta_text(done: int, total: int, elapsed: float) -> str:
    """``"40% done, about 1 min 20 s left"`` (no estimate before anything is done)."""
    if total <= 0:
        return "nothing to do"
    share = done / total
    if done <= 0 or elapsed <= 0:
        return f"{share:.0%} done"
    left = elapsed * (total - done) / done
    if done >= total:
        return f"done in {_duration(elapsed)}"
    return f"{share:.0%} done, about {_duration(left)} left"


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s" if seconds else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


class Progress:
    """``progress(done, total)`` callbacks turned into reports ``"<what> 1,024/5,000 (20% done, about
    1 min left)"`` to ``log`` and the ``rag_assets.progress`` logger, at most one every ``every`` s."""

    def __init__(self, what: str, log: Callable[[str], None], every: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what, self.log, self.every, self.clock = what, log, every, clock
        self.started = self.clock()
        self.last = -every

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if done < total and now - self.last < self.every:
            return
        self.last = now
        line = f"{self.what} {done:,}/{total:,} ({eta_text(done, total, now - self.started)})"
        self.log(line)
        logging.getLogger(LOGGER).info(line)
