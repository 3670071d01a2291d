"""How many threads a run the daemon started may use, so that runs sharing the cores do not each start
a thread per core. Runs that do were several times slower than the same runs one after the other
(bench/backfill_paths.py: a retrieval step of 4.5 s alone took 15-28 s beside a second run on 2 cores).
"""

from __future__ import annotations

from rag_assets.lib.embed.onnx_graph import limit_parallel_texts


def limit_threads(threads: int) -> None:
    """numpy's BLAS and OpenMP pools, PyTorch's intra-op threads and onnxruntime's texts in parallel:
    at most ``threads`` each, in this process from now on."""
    import threadpoolctl
    import torch

    threadpoolctl.threadpool_limits(threads)
    torch.set_num_threads(threads)
    limit_parallel_texts(threads)
