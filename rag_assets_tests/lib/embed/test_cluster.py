"""A worker started with fixed malloc thresholds (Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536)
keeps freed memory for reuse once it embeds: measured by the page faults of repeated large
allocations, in a fresh process each, as glibc reads those settings when a process starts."""

import json
import os
import subprocess
import sys

PROBE = """
import json, resource
import numpy as np
from rag_assets.lib.embed.cluster import keep_freed_memory

def faults():  # minor page faults of 50 blocks of 2 MiB, each written and freed
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(50):
        block = np.ones(2 ** 18)
        del block
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

before = faults()
changed = keep_freed_memory()
print(json.dumps({"before": before, "changed": changed, "again": keep_freed_memory(), "after": faults()}))
"""


def _probe(**environment: str) -> dict:
    env = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")} | environment
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_worker_with_dasks_malloc_setting_keeps_freed_memory_for_reuse():
    figures = _probe(MALLOC_TRIM_THRESHOLD_="65536")
    assert figures["changed"] and figures["again"], figures
    # every 2 MiB block was mapped from the kernel and faulted in page by page (512 faults a block)...
    assert figures["before"] > 50 * 256, figures
    # ...and afterwards the heap keeps it: at most the first block's pages
    assert figures["after"] < figures["before"] / 10, figures


def test_a_process_with_glibcs_defaults_is_left_as_it_is():
    figures = _probe()
    assert not figures["changed"] and not figures["again"], figures
    assert figures["before"] < 50 * 256, figures  # glibc's dynamic threshold already reuses freed blocks
