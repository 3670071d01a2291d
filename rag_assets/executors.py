"""How a run executes its steps: the ``scale_out.executor`` setting ($RAG_ASSETS_EXECUTOR).

- ``in_process`` (the default): one process per run, not per step; a step pays no interpreter and
  model start of its own.
- ``multiprocess``: a process per step, at most ``scale_out.max_steps`` at once; the daemon's runs
  of several partitions, each run's steps beside the others' (README, Scaling out).
- ``k8s``: dagster-k8s's ``k8s_job_executor``, a Kubernetes Job per step, launched from the run's
  pod with the image, namespace and environment of the K8sRunLauncher (the Helm chart's);
  ``pip install -e '.[k8s]'``.
"""

from dagster import ExecutorDefinition, in_process_executor, multiprocess_executor

from rag_assets.settings import ScaleOut


def executor_for(scale_out: ScaleOut) -> ExecutorDefinition:
    """The executor the settings name, with their step limit (0: none)."""
    if scale_out.executor == "multiprocess":
        return multiprocess_executor.configured({"max_concurrent": scale_out.max_steps}, name="multiprocess")
    if scale_out.executor == "k8s":
        try:
            from dagster_k8s import k8s_job_executor
        except ImportError as error:
            raise ValueError("RAG_ASSETS_EXECUTOR='k8s' needs dagster-k8s: pip install -e '.[k8s]'") from error
        steps = scale_out.max_steps
        return k8s_job_executor.configured({"max_concurrent": steps}, name="k8s") if steps else k8s_job_executor
    return in_process_executor
