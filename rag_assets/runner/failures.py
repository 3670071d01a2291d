"""What a failed run says to a person: one paragraph naming the step, the cause (the error the
project's own code raised, not Dagster's wrapper around it), and what a failed blocking check found;
never a traceback unless asked for (``RAG_ASSETS_DEBUG=1`` or ``rag-assets --debug``)."""

from __future__ import annotations

import errno
import logging
import re

from rag_assets.settings import SettingsError, current

DEBUG_ENV_VAR = "RAG_ASSETS_DEBUG"  # the debug setting, named in messages
_CLASS_PREFIX = re.compile(r"^(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Failure|Interrupt|Warning):\s*")
_ENGINE_NOTICES = ("Dependencies for step",)  # Dagster's own warnings: the failure paragraph says it better
_DAGSTER_WRAPPERS = ("DagsterExecutionStepExecutionError", "DagsterUserCodeExecutionError",
                     "DagsterExecutionHandleOutputError", "DagsterExecutionLoadInputError",
                     "DagsterExecutionInterruptedError")


class RunFailed(RuntimeError):
    """A run ended in failure; the message is the paragraph to show. ``run_id`` names the run."""

    def __init__(self, message: str, run_id: str) -> None:
        super().__init__(message)
        self.run_id = run_id


class UsageError(ValueError):
    """The models or strategies asked for cannot be run as given (before anything runs)."""


class RunInterrupted(RunFailed):
    """A run stopped by Ctrl-C or SIGTERM (Dagster records it as failed and releases its slots)."""


class InterruptedAfterRun(RunInterrupted):
    """Ctrl-C or SIGTERM arrived while Dagster ended a run (which it recorded as it ended): the command
    stops before its next run; the message says which run it was and how it was recorded."""


def debugging() -> bool:
    """The debug setting; False when the settings themselves cannot be read (that error is told plainly)."""
    try:
        return current().debug
    except SettingsError:
        return False


def _innermost(error):
    """The project's error inside Dagster's wrappers (a SerializableErrorInfo chain)."""
    while error.cls_name in _DAGSTER_WRAPPERS and (error.cause or error.context):
        error = error.cause or error.context
    return error


def error_sentence(cls_name: str, message: str) -> str:
    """An error as a sentence: the message without its module path, the class only where it says
    something ("no space left on device" for ENOSPC, whatever the class)."""
    text = " ".join(message.split())
    text = re.sub(rf"^(?:[A-Za-z_]\w*\.)*{re.escape(cls_name)}:\s*", "", text) if cls_name else text
    text = _CLASS_PREFIX.sub("", text)
    os_error = re.match(r"^\[Errno (\d+)\] ([^:]+)(?::\s*(.*))?$", text)
    if os_error and int(os_error.group(1)) == errno.ENOSPC:
        where = f" writing {os_error.group(3)}" if os_error.group(3) else ""
        return f"no space left on device{where}. Free space (or point RAG_ASSETS_HOME elsewhere) and run again"
    if os_error and int(os_error.group(1)) in (errno.EACCES, errno.EROFS, errno.EPERM):
        where = f" {os_error.group(3)}" if os_error.group(3) else ""
        return (f"cannot write{where} ({os_error.group(2).lower()}): the storage folder (RAG_ASSETS_HOME) must be "
                "writable")
    if cls_name in ("KeyError", "RecursionError", "MemoryError", "AssertionError") or not text:
        return f"{cls_name}: {text}"
    return text


def failed_check_lines(result) -> list[str]:
    """One line per failed blocking check of the run: its name, description and what it found."""
    lines = []
    for evaluation in result.get_asset_check_evaluations():
        if evaluation.passed or evaluation.severity.value != "ERROR":
            continue
        found = "; ".join(f"{key}: {_short(value.value)}" for key, value in evaluation.metadata.items())
        lines.append(f"check {evaluation.check_name} of {evaluation.asset_key.to_user_string()} failed"
                     + (f" ({evaluation.description})" if evaluation.description else "")
                     + (f": {found}" if found else ""))
    return lines


def _short(value, limit: int = 600) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def interrupted(result) -> bool:
    """Whether a run failed because it was interrupted (Ctrl-C, SIGTERM)."""
    from dagster import DagsterEventType  # here: the command line imports this module before anything runs

    return any(event.event_type == DagsterEventType.STEP_FAILURE and "Interrupt" in _innermost(
        event.step_failure_data.error).cls_name for event in result.all_events)


def failure_paragraph(result, what: str) -> str:
    """The paragraph for a run that did not succeed: which step failed and why, and the checks."""
    from dagster import DagsterEventType

    parts = []
    for event in result.all_events:
        if event.event_type == DagsterEventType.STEP_FAILURE:
            error = _innermost(event.step_failure_data.error)
            if error.cls_name == "DagsterAssetCheckFailedError":
                continue  # the failed checks are told below, with what they found
            parts.append(f"{event.step_key} failed: {error_sentence(error.cls_name, error.message)}")
    parts += failed_check_lines(result)
    if not parts:
        parts.append("the run did not succeed")
    return (f"{what} failed (run {result.run_id[:8]}). " + ". ".join(p.rstrip(".") for p in parts)
            + ". A failed step replaces none of its stored outputs (the last good ones stay). "
              "Run with --debug (or RAG_ASSETS_DEBUG=1) for the traceback.")


def warnings_of(instance, run_id: str) -> list[str]:
    """What the assets' own code logged at warning level or above in a run (not Dagster's events)."""
    return [entry.user_message for entry in instance.all_logs(run_id)
            if entry.dagster_event is None and entry.level >= logging.WARNING
            and not entry.user_message.startswith(_ENGINE_NOTICES)]
