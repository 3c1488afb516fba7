"""TestFacts.parallel: a test command that spreads its tests over several processes itself is not run
beside another test run (workflow/baseline_run.py): the two would only compete for the cores."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.adapters.npm.test_facts import parallel as npm_parallel
from agentic_codemod.adapters.python.test_facts import parallel as python_parallel
from agentic_codemod.adapters.types import TestCommand

PYTEST = ["{interpreter}", "-m", "pytest", "-q"]


@pytest.mark.parametrize(
    ("argv", "runner", "expected"),
    [
        ([*PYTEST, "tests"], "pytest", False),
        ([*PYTEST, "tests", "-n", "auto"], "pytest", True),
        ([*PYTEST, "-nauto"], "pytest", True),
        ([*PYTEST, "-n4"], "pytest", True),
        ([*PYTEST, "--numprocesses=2"], "pytest", True),
        ([*PYTEST, "--dist", "loadscope"], "pytest", True),
        ([*PYTEST, "--no-header"], "pytest", False),
        (["{interpreter}", "-m", "stestr", "run"], "stestr", True),
        (["{interpreter}", "-m", "stestr", "run", "--serial"], "stestr", False),
        (["{interpreter}", "-m", "twisted.trial", "-j", "4", "pkg"], "trial", True),
        (["{interpreter}", "-m", "unittest", "discover"], "unittest", False),
    ],
)
def test_python_commands_that_run_their_tests_on_several_processes(
    tmp_path: Path, argv: list[str], runner: str, expected: bool
) -> None:
    assert python_parallel(TestCommand(argv, "test", runner), tmp_path) is expected


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = "-n auto --strict-markers"\n', True),
        ("pytest.ini", "[pytest]\naddopts =\n    --strict-markers\n    --numprocesses=4\n", True),
        ("setup.cfg", "[tool:pytest]\naddopts = -ra -q\n", False),
        ("tox.ini", "[pytest]\naddopts = -nauto\n", True),
        ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = ['-n', 'auto']\n", True),
        ("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n', False),
    ],
)
def test_xdist_in_the_repository_s_pytest_addopts_counts(
    tmp_path: Path, name: str, text: str, expected: bool
) -> None:
    (tmp_path / name).write_text(text)
    assert python_parallel(TestCommand([*PYTEST, "tests"], name, "pytest"), tmp_path) is expected


def test_a_pytest_configuration_behind_a_link_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.ini"
    outside.write_text("[pytest]\naddopts = -n auto\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pytest.ini").symlink_to(outside)
    assert python_parallel(TestCommand([*PYTEST, "tests"], "pytest.ini", "pytest"), root) is False


@pytest.mark.parametrize(
    ("argv", "runner", "expected"),
    [
        (["node", "node_modules/.bin/jest", "--ci"], "jest", True),
        (["node", "node_modules/.bin/jest", "--ci", "--runInBand"], "jest", False),
        (["node", "node_modules/.bin/vitest", "run"], "vitest", True),
        (["node", "node_modules/.bin/vitest", "run", "--no-file-parallelism"], "vitest", False),
        (["node", "--test", "test/"], "node-test", True),
        (["node", "--test", "--test-concurrency=1", "test/"], "node-test", False),
        (["node", "node_modules/.bin/mocha"], "mocha", False),
        (["node", "node_modules/.bin/mocha", "--parallel"], "mocha", True),
        (["node", "node_modules/.bin/tape", "test/*.js"], "tape", False),
    ],
)
def test_npm_runners_that_spread_files_over_workers(
    tmp_path: Path, argv: list[str], runner: str, expected: bool
) -> None:
    assert npm_parallel(TestCommand(argv, "scripts.test", runner), tmp_path) is expected
