"""Test suites call pip (jupyter_core's `python -m pip list`): the verification venv holds what
`python -m venv` seeds, from the interpreter's own ensurepip wheels and offline, so a safe bump of such a
repository is green, through uv with an environment template and through pip."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_support import PLAIN_TASK, stable_repo_files

from agentic_codemod.adapters.python import seed
from agentic_codemod.adapters.python.installer import find_uv

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(seed.find() is None, reason="this Python ships no ensurepip wheels to seed from"),
]

PIP_TEST = """\
import subprocess
import sys


def test_pip_runs_in_the_tests_interpreter():
    subprocess.run([sys.executable, "-m", "pip", "--version"], check=True)


def test_pip_lists_what_the_tests_run_on():
    listed = subprocess.run([sys.executable, "-m", "pip", "list"], check=True, capture_output=True, text=True)
    assert "acme-sdk" in listed.stdout.lower().replace("_", "-")
"""


@pytest.mark.parametrize("installer", ["auto", "pip"])
def test_a_suite_that_calls_pip_is_green_on_a_safe_bump(
    make_repo, run_codemod, tmp_path: Path, installer: str
) -> None:
    repo = make_repo("calls-pip", {**stable_repo_files(), "tests/test_pip.py": PIP_TEST})
    (tmp_path / "task.yml").write_text(PLAIN_TASK)
    (tmp_path / "config.yml").write_text(f"python:\n  installer: {installer}\n")

    result = run_codemod(repo, tmp_path / "task.yml", "--config", str(tmp_path / "config.yml"))

    m = result.manifest
    assert result.code == 0, m["reason"]
    assert m["classification"] == "green"
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]
    assert all(v["passed"] and v["tests"]["passed"] == 3 for v in m["verifications"])
    found = seed.find()
    assert found is not None
    assert m["installs"]["baseline"]["seed"] == m["installs"]["after"]["seed"] == found.label
    if installer == "auto" and find_uv() is not None:
        assert m["installs"]["baseline"]["template"]  # the seed came in the environment template
    for name, version in found.wheels:
        assert m["environments"]["baseline"][name] == version  # nothing in the plan asked for another
