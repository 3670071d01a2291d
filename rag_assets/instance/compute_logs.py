"""Where a step's stdout and stderr go: to its log files under the Dagster instance, as Dagster's local
compute log manager puts them (the UI shows them with the step), without the console copy.

Dagster's own manager mirrors each step's output to the console through two child processes per step
(``tail -F`` and a Python watcher). They share the terminal's process group, so a Ctrl-C reaches them
too, and the watcher printed a KeyboardInterrupt traceback under rag-assets' one line. rag-assets prints
its own progress and sends Dagster's console log nowhere, so the copy was not needed: this manager
writes the same files with no child process. ``instance.instance_yaml`` configures it.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

from rag_assets.dagster_compat import private

_LocalComputeLogManager = private("LocalComputeLogManager")


class StepLogsToFiles(_LocalComputeLogManager):
    """Dagster's LocalComputeLogManager (same folder, same files, same reading), capturing without the
    console mirror's child processes."""

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> StepLogsToFiles:
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def capture_logs(self, log_key):
        redirect_to_file = private("redirect_to_file")
        out, err = (Path(self.get_captured_local_path(log_key, extension)) for extension in ("out", "err"))
        for path in (out, err):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        with redirect_to_file(sys.stdout, str(out)), redirect_to_file(sys.stderr, str(err)):
            yield private("CapturedLogContext")(log_key)
        Path(self.complete_artifact_path(log_key)).touch()  # the capture is complete (as Dagster's does)
