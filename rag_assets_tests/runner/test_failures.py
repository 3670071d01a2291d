"""The paragraph a failed run becomes: the step, the project's own error inside Dagster's wrappers, and
what a failed blocking check found, on a real (tiny) Dagster job."""

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetSelection,
    DagsterInstance,
    Definitions,
    MetadataValue,
    asset,
    asset_check,
    define_asset_job,
)

from rag_assets.runner.failures import error_sentence, failure_paragraph


@asset
def needles() -> int:
    return 1


@asset_check(asset=needles, blocking=True, description="Each needle occurs exactly once.")
def needles_occur_once() -> AssetCheckResult:
    return AssetCheckResult(passed=False, severity=AssetCheckSeverity.ERROR,
                            metadata={"problems": MetadataValue.json(["k1: occurs 0 times"]), "files": "a.md"})


@asset(deps=[needles])
def downstream() -> int:
    return 2


@asset
def broken() -> int:
    raise ValueError("the corpus folder /nowhere does not exist")


def _run(selection):
    definitions = Definitions(assets=[needles, downstream, broken], asset_checks=[needles_occur_once],
                              jobs=[define_asset_job("job", selection=selection)])
    return definitions.resolve_job_def("job").execute_in_process(instance=DagsterInstance.ephemeral(),
                                                                 raise_on_error=False)


def test_a_failed_blocking_check_is_told_with_what_it_found():
    result = _run(AssetSelection.assets(needles, downstream))
    assert not result.success
    paragraph = failure_paragraph(result, "evaluation_inputs")
    assert paragraph.startswith(f"evaluation_inputs failed (run {result.run_id[:8]}).")
    assert "check needles_occur_once of needles failed: problems:" in paragraph
    assert "k1: occurs 0 times" in paragraph and "files: a.md" in paragraph
    assert "\n" not in paragraph and "Traceback" not in paragraph


def test_the_projects_own_error_is_told_not_dagsters_wrapper():
    paragraph = failure_paragraph(_run(AssetSelection.assets(broken)), "evaluation_inputs")
    assert "broken failed: the corpus folder /nowhere does not exist" in paragraph
    assert "DagsterExecutionStepExecutionError" not in paragraph and "Error occurred while" not in paragraph


def test_os_errors_read_as_sentences_with_their_path():
    assert error_sentence("OSError", "OSError: [Errno 28] No space left on device: '/h/x.parquet'") == (
        "no space left on device writing '/h/x.parquet'. Free space (or point RAG_ASSETS_HOME elsewhere) and run again")
    assert error_sentence("PermissionError", "PermissionError: [Errno 13] Permission denied: '/h'").startswith(
        "cannot write '/h' (permission denied)")
    assert error_sentence("KeyError", "KeyError: 'doc_id'") == "KeyError: 'doc_id'"  # the class says something here
