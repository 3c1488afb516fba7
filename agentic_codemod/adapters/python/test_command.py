"""The command that verifies a Python repository, decided from its files, first match wins:

    1. pytest configuration: pytest.ini / .pytest.ini, pyproject.toml [tool.pytest.ini_options] or
       [tool.pytest], setup.cfg [tool:pytest], tox.ini [pytest]              -> pytest
    2. a tests/ or test/ folder holding test_*.py or *_test.py               -> pytest tests/
    3. tox.ini whose [testenv] commands run pytest or unittest               -> that runner
    4. any test*.py file elsewhere in the tree                               -> unittest discover
    none of these: None (without a test suite a change cannot be verified).

tox itself is never run: it builds its own environments and may reach the network.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Iterator
from pathlib import Path

import tomlkit

from agentic_codemod.adapters.types import TestCommand

PYTEST = ["{python}", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={junit}"]
UNITTEST = ["{python}", "-m", "unittest", "discover"]

TEST_FOLDERS = ("tests", "test")
TEST_FILE_GLOBS = ("test_*.py", "*_test.py")
# Directories never searched for test files: environments, caches, build output, vendored code.
SKIPPED_DIRS = frozenset(
    {"node_modules", "site-packages", "__pycache__", "venv", "env", "build", "dist", "apm_modules"}
)


def detect_test_command(root: Path) -> TestCommand | None:
    source = pytest_config(root)
    if source:
        return TestCommand(argv=list(PYTEST), source=source, runner="pytest")
    for folder in TEST_FOLDERS:
        if (root / folder).is_dir() and _has_test_files(root / folder):
            return TestCommand(argv=[*PYTEST, folder], source=f"{folder}/ folder", runner="pytest")
    runner = _tox_runner(root)
    if runner == "pytest":
        return TestCommand(argv=list(PYTEST), source="tox.ini [testenv] commands", runner="pytest")
    if runner == "unittest":
        return TestCommand(argv=list(UNITTEST), source="tox.ini [testenv] commands", runner="unittest")
    if any(path.name.startswith("test") for path in _python_files(root)):
        return TestCommand(
            argv=list(UNITTEST), source="test*.py files (unittest fallback)", runner="unittest"
        )
    return None


def pytest_config(root: Path) -> str | None:
    """Where pytest's configuration is declared, as a source label, or None."""
    for name in ("pytest.ini", ".pytest.ini"):
        if (root / name).is_file():
            return name
    tool = _toml_table(root / "pyproject.toml", "tool")
    pytest = tool.get("pytest")
    if isinstance(pytest, dict):
        return (
            "pyproject.toml [tool.pytest.ini_options]"
            if "ini_options" in pytest
            else "pyproject.toml [tool.pytest]"
        )
    if _ini(root / "setup.cfg").has_section("tool:pytest"):
        return "setup.cfg [tool:pytest]"
    if _ini(root / "tox.ini").has_section("pytest"):
        return "tox.ini [pytest]"
    return None


def _tox_runner(root: Path) -> str | None:
    tox = _ini(root / "tox.ini")
    commands = " ".join(
        tox.get(section, "commands", fallback="")
        for section in tox.sections()
        if section == "testenv" or section.startswith("testenv:")
    )
    if "pytest" in commands or "py.test" in commands:
        return "pytest"
    if "unittest" in commands:
        return "unittest"
    return None


def _has_test_files(folder: Path) -> bool:
    return any(any(folder.rglob(pattern)) for pattern in TEST_FILE_GLOBS)


def _python_files(root: Path) -> Iterator[Path]:
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        yield from (Path(directory, f) for f in files if f.endswith(".py"))


def _toml_table(path: Path, key: str) -> dict[str, object]:
    """A top-level table of a TOML file; empty when the file is missing or broken (extract reports it)."""
    try:
        value = tomlkit.parse(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, tomlkit.exceptions.TOMLKitError):
        return {}
    return value if isinstance(value, dict) else {}


def _ini(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, configparser.Error):
        return configparser.ConfigParser(interpolation=None)
    return parser
