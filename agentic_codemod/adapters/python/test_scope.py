"""How many tests a declared test command would run, estimated from the files (pure: nothing is run).

    estimate(root, runner, args) -> int

Used to choose between several test commands of one tox testenv or nox session (`pytest tests/pytest`
and `python -m testtools.run discover`): the tool runs one command, the one that covers the most tests.
The count is of test functions written in the files the runner would collect, read with `ast`:

    pytest             files test_*.py / *_test.py under the path arguments (default: the root); module
                       functions test* and methods test* of classes
    unittest discover  files matching -p (default test*.py) under -s / the first argument (default: the
                       root); methods test* of classes only (unittest collects no bare functions)
    unittest MODULE    the module's file (dotted name), methods test* of classes
    stestr             as unittest discover from --test-path
    trial PACKAGE      files test*.py in the package (dotted name, at the root or under src/) or the
                       module's file; methods test* of classes

A syntax error in a file counts that file as 0; so does a path outside the root.
"""

from __future__ import annotations

import ast
import fnmatch
import os
from pathlib import Path

from agentic_codemod.errors import UNPARSEABLE

PYTEST_FILES = ("test_*.py", "*_test.py")
UNITTEST_PATTERN = "test*.py"
# Directories never searched for test files: environments, caches, build output, vendored code.
SKIPPED_DIRS = frozenset(
    {"node_modules", "site-packages", "__pycache__", "venv", "env", "build", "dist", "apm_modules"}
)
# Options that take a value (so the value is not read as a path); pytest's -s takes none, unittest's does.
PYTEST_VALUE_OPTIONS = frozenset(
    {"-k", "-m", "-c", "-o", "-n", "-p", "-W", "--rootdir", "--ignore", "--deselect", "--maxfail"}
    | {"--cov", "--cov-config", "--cov-report", "--durations", "--tb", "--junitxml", "--basetemp"}
)
UNITTEST_VALUE_OPTIONS = frozenset(
    {"-k", "-s", "--start-directory", "-t", "--top-level-directory", "-p", "--pattern"}
    | {"--test-path", "--top-dir", "--concurrency", "--load-list"}
)


def estimate(root: Path, runner: str, args: list[str]) -> int:
    if runner == "pytest":
        paths = _positional(args, PYTEST_VALUE_OPTIONS) or ["."]
        return sum(_count(root, p.split("::")[0], PYTEST_FILES, functions=True) for p in paths)
    if runner == "stestr":
        return _count(root, _option(args, ("--test-path",)) or ".", (UNITTEST_PATTERN,), functions=False)
    named = _positional(args, UNITTEST_VALUE_OPTIONS)
    if runner == "trial":
        return sum(_trial_count(root, name) for name in named)
    if named[:1] == ["discover"] or not named:
        rest = named[1:]
        start = _option(args, ("-s", "--start-directory")) or (rest[0] if rest else ".")
        pattern = _option(args, ("-p", "--pattern")) or (rest[1] if len(rest) > 1 else UNITTEST_PATTERN)
        return _count(root, start, (pattern,), functions=False)
    modules = [m.replace(".", "/") for m in named]
    return sum(_count(root, m if m.endswith(".py") else f"{m}.py", ("*",), functions=False) for m in modules)


def _trial_count(root: Path, name: str) -> int:
    path = name.replace(".", "/")
    for base in ("", "src/"):
        for candidate in (f"{base}{path}", f"{base}{path}.py"):
            if (root / candidate).exists():
                return _count(root, candidate, (UNITTEST_PATTERN,), functions=False)
    return 0


def _count(root: Path, relative: str, patterns: tuple[str, ...], *, functions: bool) -> int:
    base = (root / relative).resolve()
    if not base.is_relative_to(root.resolve()) or not base.exists():
        return 0
    files = [base] if base.is_file() else _files(base, patterns)
    return sum(_tests_in(path, functions) for path in files)


def _files(base: Path, patterns: tuple[str, ...]) -> list[Path]:
    found = []
    for directory, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        found += [Path(directory, n) for n in sorted(names) if any(fnmatch.fnmatch(n, p) for p in patterns)]
    return found


def _tests_in(path: Path, functions: bool) -> int:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, *UNPARSEABLE):
        return 0
    count = 0
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            count += sum(1 for item in node.body if _is_test(item))
        elif functions and _is_test(node):
            count += 1
    return count


def _is_test(node: ast.stmt) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")


def _positional(args: list[str], value_options: frozenset[str]) -> list[str]:
    found: list[str] = []
    queue = list(args)
    while queue:
        arg = queue.pop(0)
        if arg.startswith("-"):
            if "=" not in arg and arg in value_options and queue:
                queue.pop(0)
            continue
        found.append(arg)
    return found


def _option(args: list[str], names: tuple[str, ...]) -> str | None:
    for i, arg in enumerate(args):
        if arg in names and i + 1 < len(args):
            return args[i + 1]
        name, sep, value = arg.partition("=")
        if sep and name in names:
            return value
    return None
