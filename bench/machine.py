"""What machine a benchmark ran on, in the words the figures files and BENCHMARKS.md use."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def describe() -> str:
    """``x86_64, <CPU>, 2 cores, 24 GiB``: the architecture, processor, cores this process may use, memory."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{platform.machine()}, {cpu()}, {len(os.sched_getaffinity(0))} cores, {memory:.0f} GiB"
