"""A run the daemon started shares the cores: its threads are limited, a `rag-assets` run's are not."""

import os
from types import SimpleNamespace

import threadpoolctl
import torch

from rag_assets.lib.embed import onnx_graph
from rag_assets.lib.embed.threads import limit_threads
from rag_assets.resources import EmbeddingModels
from rag_assets.tags import TRIGGER_TAG


def _threads() -> tuple[int, int, set[int]]:
    return torch.get_num_threads(), onnx_graph.parallel_texts(), {
        pool["num_threads"] for pool in threadpoolctl.threadpool_info()}


def test_a_daemon_run_gets_its_share_of_the_cores_and_a_command_run_all_of_them(monkeypatch):
    before = _threads()
    context = lambda trigger: SimpleNamespace(run=SimpleNamespace(tags={TRIGGER_TAG: trigger}))  # noqa: E731
    try:
        monkeypatch.setenv("RAG_ASSETS_RUN_THREADS", "1")
        EmbeddingModels().setup_for_execution(context("cli"))
        assert _threads() == before  # `rag-assets` runs one run at a time: every core
        EmbeddingModels().setup_for_execution(context("ui"))
        assert _threads() == (1, 1, {1})
        monkeypatch.delenv("RAG_ASSETS_RUN_THREADS")
        monkeypatch.setenv("RAG_ASSETS_MAX_RUNS", "1")  # the default: the cores shared among the runs at once
        EmbeddingModels().setup_for_execution(context("automation"))
        assert _threads()[0] == max(1, os.cpu_count() or 1)
    finally:
        limit_threads(before[0])
        onnx_graph.limit_parallel_texts(None)
