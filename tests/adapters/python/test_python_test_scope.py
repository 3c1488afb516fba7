"""How many tests a declared command would run, estimated from the files with ast (nothing is run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.adapters.python.test_scope import estimate

CASES = (
    "import unittest\nclass T(unittest.TestCase):\n    def test_a(self): pass\n    def test_b(self): pass\n"
)
FUNCTIONS = "def test_x(): pass\nasync def test_y(): pass\ndef helper(): pass\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "tests/__init__.py": "",
        "tests/test_cases.py": CASES,
        "tests/unit/test_functions.py": FUNCTIONS,
        "tests/unit/check_other.py": CASES,
        "tests/broken_test.py": "def test_(:\n",
        "src/test_outside.py": CASES,
        "venv/lib/test_vendored.py": CASES,
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("runner", "args", "expected"),
    [
        ("pytest", ["tests"], 4),  # cases + functions; broken file 0; check_other.py not collected
        ("pytest", ["-s", "tests/unit"], 2),  # pytest's -s takes no value
        ("pytest", ["tests/test_cases.py::T"], 2),
        ("pytest", [], 6),  # the root: src too, never venv/
        ("pytest", ["-k", "tests", "../elsewhere"], 0),
        ("unittest", ["discover"], 4),  # classes only: tests/ and src/
        ("unittest", ["discover", "-s", "tests"], 2),
        ("unittest", ["discover", "-s", "tests", "-p", "check*.py"], 2),
        ("unittest", ["-v", "tests.test_cases"], 2),
        ("stestr", ["--test-path", "./tests", "run"], 2),
    ],
)
def test_estimate(tree: Path, runner: str, args: list[str], expected: int) -> None:
    assert estimate(tree, runner, args) == expected
