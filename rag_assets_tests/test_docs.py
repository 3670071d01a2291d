"""The documentation site builds strictly, its figures come from the files the benchmarks write, and the
README's times are those the setup benchmark measured."""

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rag_assets

PROJECT = Path(rag_assets.__file__).resolve().parents[1]
SETUP = json.loads((PROJECT / "docs" / "figures" / "setup.json").read_text())


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", PROJECT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_builds_strictly_with_every_figure_found(tmp_path):
    mkdocs = Path(sys.executable).with_name("mkdocs")
    result = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=PROJECT,
                            capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stdout + result.stderr
    settings_page = (tmp_path / "site" / "settings" / "index.html").read_text()
    assert "RAG_ASSETS_HNSW_M" in settings_page and "{{" not in settings_page
    built = "".join(page.read_text() for page in (tmp_path / "site").rglob("*.html"))
    assert "{{ figure" not in built


def test_a_placeholder_that_names_nothing_fails_naming_the_page():
    hooks = _hooks()
    assert hooks.render("Times: {{ figure setup.summary }}") == f"Times: {SETUP['summary']}"
    with pytest.raises(ValueError, match=r"page.md: \{\{ figure setup.nothing \}\}: setup.nothing: no 'nothing'"):
        hooks.render("{{ figure setup.nothing }}", "page.md")


def test_the_readme_states_the_measured_times():
    """The README's times are those bench/setup_times.py measured, or it says they were not measured."""
    readme = " ".join((PROJECT / "README.md").read_text().split())
    if SETUP.get("measured") is None:
        assert "`make demo` and `make test` have not yet been timed from a fresh clone" in readme
        return
    found = re.search(r"`make demo` took ([\d.]+) minutes and `make test` ([\d.]+) minutes \((\d+) tests\), "
                      r"measured on (\S+) by `bench/setup_times.py` with every package downloaded", readme)
    assert found, "the README's sentence with the two commands' times is gone"
    cold_demo, cold_test = SETUP["make_demo_cold"], SETUP["make_test_cold"]
    assert (float(found[1]), float(found[2]), int(found[3])) == (
        cold_demo["minutes"], cold_test["minutes"], cold_test["tests_passed"])
    assert found[4] == cold_test.get("measured", SETUP["measured"])
    warm = re.search(r"cache warm, as for CI here: ([\d.]+) and ([\d.]+) minutes \((\d+) tests\), measured on (\S+)",
                     readme)
    demo, test = SETUP["make_demo"], SETUP["make_test"]
    assert warm and (float(warm[1]), float(warm[2]), int(warm[3]), warm[4]) == (
        demo["minutes"], test["minutes"], test["tests_passed"], test.get("measured", SETUP["measured"]))
    assert all(SETUP[key]["exit"] == 0 for key in ("make_demo", "make_test", "make_demo_cold", "make_test_cold"))


def test_the_readme_stays_short():
    assert len((PROJECT / "README.md").read_text().splitlines()) <= 200
