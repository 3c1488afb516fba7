"""Test command detection: an override, tox/nox commands, stestr, pytest configuration, test folders,
a unittest fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.adapters.python.test_command import PYTEST, UNITTEST, detect_test_command


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def test_pytest_argv_is_fixed() -> None:
    assert PYTEST == ["{python}", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={junit}"]
    assert UNITTEST == ["{python}", "-m", "unittest", "discover", "-v"]  # -v: failures carry test ids


@pytest.mark.parametrize(
    ("files", "source"),
    [
        ({"pytest.ini": "[pytest]\n"}, "pytest.ini"),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-ra'\n"},
            "pyproject.toml [tool.pytest.ini_options]",
        ),
        ({"pyproject.toml": "[tool.pytest]\nminversion = '9.0'\n"}, "pyproject.toml [tool.pytest]"),
        ({"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\ntestpaths = t\n"}, "setup.cfg [tool:pytest]"),
        ({"tox.ini": "[tox]\nenvlist = py311\n[pytest]\naddopts = -ra\n"}, "tox.ini [pytest]"),
    ],
)
def test_pytest_configuration(tmp_path: Path, files: dict[str, str], source: str) -> None:
    command = detect_test_command(write(tmp_path, files))
    assert command is not None
    assert (command.argv, command.source, command.runner) == (PYTEST, source, "pytest")


def test_pytest_configuration_wins_over_a_test_folder(tmp_path: Path) -> None:
    write(tmp_path, {"pytest.ini": "[pytest]\n", "tests/test_app.py": ""})
    command = detect_test_command(tmp_path)
    assert command is not None and command.source == "pytest.ini"


@pytest.mark.parametrize(("folder", "file"), [("tests", "unit/test_app.py"), ("test", "app_test.py")])
def test_test_folder_runs_pytest_on_it(tmp_path: Path, folder: str, file: str) -> None:
    command = detect_test_command(write(tmp_path, {f"{folder}/{file}": "def test_x(): pass\n"}))
    assert command is not None
    assert (command.argv, command.source, command.runner) == (
        [*PYTEST, folder],
        f"{folder}/ folder",
        "pytest",
    )


def test_tests_folder_without_test_files_is_not_a_suite(tmp_path: Path) -> None:
    assert detect_test_command(write(tmp_path, {"tests/helpers.py": "", "app.py": ""})) is None


@pytest.mark.parametrize(
    ("commands", "runner", "argv"),
    [
        ("pytest {posargs}", "pytest", PYTEST),
        ("python -m unittest discover -s src", "unittest", [*UNITTEST, "-s", "src"]),
    ],
)
def test_tox_commands_choose_the_runner(tmp_path: Path, commands: str, runner: str, argv: list[str]) -> None:
    write(tmp_path, {"tox.ini": f"[tox]\nenvlist = py311\n\n[testenv]\ncommands =\n    {commands}\n"})
    command = detect_test_command(tmp_path)
    assert command is not None
    assert (command.argv, command.source, command.runner) == (argv, "tox.ini [testenv] commands", runner)


def test_unittest_fallback_for_test_files_elsewhere(tmp_path: Path) -> None:
    command = detect_test_command(write(tmp_path, {"src/app/test_core.py": "import unittest\n"}))
    assert command is not None
    assert (command.argv, command.runner) == (UNITTEST, "unittest")


def test_nothing_that_could_be_a_test_suite(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app.py": "",
            "pyproject.toml": "[project]\nname = 'x'\n",
            ".venv/lib/site-packages/pkg/test_vendored.py": "",  # environments are not the repo's tests
            "node_modules/x/test_x.py": "",
        },
    )
    assert detect_test_command(tmp_path) is None


def test_broken_config_files_do_not_crash_detection(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"pyproject.toml": "[tool.pytest\n", "setup.cfg": "no section header\n", "tests/test_a.py": ""},
    )
    command = detect_test_command(tmp_path)
    assert command is not None and command.source == "tests/ folder"
