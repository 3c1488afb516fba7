"""A test oracle that can't be flipped quietly: the canary.

Every verification, the baseline included, plants one test the tool owns into the disposable copy,
beside a test file of the repository, so it is collected under the repository's own configuration
(conftest.py, plugins, addopts). The canary must fail. If it reads as passed, or goes missing, something
in the repository rewrites or hides results, and no result of that run can be trusted.

    canary = plant(root, command)            the canary's file in the copy (never in the candidate)
    state = canary.state_in(tally, ids, out) "failed" (as it must) | "passed" | "missing"
    suspects(root) -> list[str]              hooks and plugins in the copy that can rewrite results
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentic_codemod.adapters.types import TestCommand, TestFacts
from agentic_codemod.models import Tally

CanaryState = Literal["failed", "passed", "missing"]
TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")
UNITTEST_FILE = re.compile(r"^test.*\.py$")  # unittest discover's default pattern (tests.py too)
SKIPPED_DIRS = frozenset({".git", "node_modules", "site-packages", "__pycache__", ".tox", ".nox", "build"})
# Code that can change what a test run reports (pytest hooks and plugin loading, in any file).
SUSPECT = re.compile(
    r"(def\s+pytest_(runtest_\w+|report_\w+|collection_modifyitems|terminal_summary|sessionfinish)"
    r"|pluginmanager\.register|PYTEST_PLUGINS|pytest_plugins\s*=|-p\s+(?!no:)[\w.]+)"
)
# Options that name the one directory a runner collects tests from (unittest discover, stestr).
START_OPTIONS = ("-s", "--start-directory", "--test-path")
SUSPECT_FILES = ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")


@dataclass(frozen=True)
class Canary:
    file: str  # repository-relative
    token: str  # in the class and test names

    def state_in(self, tally: Tally | None, case_ids: list[str], output: str) -> CanaryState:
        """What happened to the canary; the canary is taken out of the tally (in place)."""
        if tally is None:
            return "missing"
        if any(self.token in t for t in case_ids):  # a JUnit report lists it
            failing = [t for t in tally.failing if self.token in t]
            tally.failing = [t for t in tally.failing if self.token not in t]
            if failing:
                _uncount(tally)
                return "failed"
            tally.passed = max(tally.passed - 1, 0)
            return "passed"
        if re.search(rf"^(FAIL|ERROR): \S*{self.token}", output, re.MULTILINE):  # unittest's report
            tally.failing = [t for t in tally.failing if self.token not in t]
            _uncount(tally)
            return "failed"
        return "missing"


def plant(root: Path, command: TestCommand, facts: TestFacts | None = None) -> Canary | None:
    """Write the canary beside the first test file the command would collect; None if there is none.
    With `facts` (the adapter's), the ecosystem says what a test file is and what its canary says."""
    if facts is not None:
        return _plant(root, command, facts)
    sibling = _first_test_file(root, _start_dirs(root, command))
    if sibling is None:
        return None
    token = f"c{secrets.token_hex(5)}"
    name = f"{token}_test.py" if sibling.name.endswith("_test.py") and command.runner == "pytest" else None
    path = sibling.parent / (name or f"test_{token}.py")
    path.write_text(
        "import unittest\n\n\n"
        f"class Test{token.capitalize()}(unittest.TestCase):\n"
        f"    def test_{token}(self):\n"
        f"        self.assertEqual({secrets.randbelow(900) + 100}, {secrets.randbelow(900) + 1000})\n",
        encoding="utf-8",
    )
    return Canary(file=path.relative_to(root).as_posix(), token=token)


PYTEST_SECTION = re.compile(r"^_{3,} .* _{3,}\s*$")
# One problem of trial's report: a rule of `=`, `[FAIL]` or `[ERROR]`, the traceback, the test ids.
TRIAL_BLOCK = re.compile(r"(?ms)^={20,}\n\[(?:FAIL|FAILURE|ERROR)\]\n.*?(?=^={20,}$|^-{20,}$|\Z)")
NOTE = "[agentic-codemod: the canary test failed as it must; its report is cut from this output]\n"


def scrub(output: str, token: str) -> str:
    """The output without the canary's own report (pytest's section, FAILED line and count; unittest's
    FAIL block and count; trial's problem block), so the coder, the reviewer and a lesson read the
    repository's results only."""
    output = TRIAL_BLOCK.sub(lambda block: "" if token in block.group(0) else block.group(0), output)
    out: list[str] = []
    skip, block_lines = "", 0
    for line in output.splitlines(keepends=True):
        if skip == "pytest" and (PYTEST_SECTION.match(line) or line.startswith("===")):
            skip = ""
        elif skip == "unittest":
            block_lines += 1
            if line.startswith("===") or (line.startswith("---") and block_lines > 1):
                skip = ""
        if skip:
            continue
        if token in line:
            if PYTEST_SECTION.match(line):
                skip = "pytest"
            elif line.startswith(("FAIL: ", "ERROR: ")):
                skip, block_lines = "unittest", 0
                if out and out[-1].startswith("==="):
                    out.pop()
            continue
        out.append(line)
    text = "".join(out)
    text = re.sub(r"(?m)^(=* ?)(\d+) failed(, )?", _one_failure_fewer, text)
    text = re.sub(r"(?m)^FAILED \((.*)\)$", _one_unittest_failure_fewer, text)
    return text + ("" if text.endswith("\n") or not text else "\n") + NOTE


def _one_failure_fewer(match: re.Match[str]) -> str:
    left = int(match.group(2)) - 1
    return match.group(1) + (f"{left} failed{match.group(3) or ''}" if left else "")


def _one_unittest_failure_fewer(match: re.Match[str]) -> str:
    parts = dict(p.split("=", 1) for p in match.group(1).split(", ") if "=" in p)
    if parts.get("failures", "0").isdigit() and int(parts.get("failures", "0")) > 0:
        parts["failures"] = str(int(parts["failures"]) - 1)
    left = ", ".join(f"{k}={v}" for k, v in parts.items() if v != "0")
    if any(parts.get(k, "0") != "0" for k in ("failures", "errors", "unexpected successes")):
        return f"FAILED ({left})"
    return f"OK ({left})" if left else "OK"


def suspects(root: Path) -> list[str]:
    """'path: hook' for every place in the copy that can rewrite or hide test results."""
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            if name not in SUSPECT_FILES and not name.endswith(".pth"):
                continue
            path = Path(directory, name)
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            hooks = sorted(
                {m.group(0).split("(")[0].replace("def ", "").strip() for m in SUSPECT.finditer(text)}
            )
            if hooks or name.endswith(".pth"):
                found.append(f"{path.relative_to(root).as_posix()}: {', '.join(hooks) or 'path hook'}")
    return found


def _start_dirs(root: Path, command: TestCommand) -> list[Path]:
    """The directory the runner starts from (unittest -s, stestr --test-path), else directories named on
    the command line (pytest tests/), else the repository root."""
    argv = command.argv
    for option in START_OPTIONS:
        if option in argv[:-1] and (root / argv[argv.index(option) + 1]).is_dir():
            return [root / argv[argv.index(option) + 1]]
    named = [root / a for a in argv[1:] if not a.startswith(("-", "{")) and (root / a).is_dir()]
    return named or [root]


def _plant(root: Path, command: TestCommand, facts: TestFacts) -> Canary | None:
    """The adapter's canary beside the shallowest of its test files (one in a test folder first)."""
    best: tuple[int, int, str] | None = None
    for start in _start_dirs(root, command):
        for directory, dirs, files in os.walk(start):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
            rel = Path(directory).relative_to(root)
            in_tests = any(part in ("tests", "test", "__tests__") for part in rel.parts)
            for name in sorted(files):
                if facts.is_test_file((rel / name).as_posix()):
                    key = (0 if in_tests else 1, len(rel.parts), (rel / name).as_posix())
                    best = key if best is None or key < best else best
    if best is None:
        return None
    token = f"c{secrets.token_hex(5)}"
    sibling = root / best[2]
    planted = facts.canary(command, sibling.name, token)
    path = sibling.parent / planted.name
    path.write_text(planted.text, encoding="utf-8")
    return Canary(file=path.relative_to(root).as_posix(), token=token)


def _first_test_file(root: Path, starts: list[Path]) -> Path | None:
    """The shallowest test file under the start dirs, preferring a tests/ or test/ folder and pytest's
    names (test_*.py, *_test.py) to unittest's wider test*.py (a top-level tests.py)."""
    best: tuple[int, int, int, str] | None = None
    found: Path | None = None
    for start in starts:
        for directory, dirs, files in os.walk(start):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
            rel = Path(directory).relative_to(root)
            in_tests = any(part in ("tests", "test") for part in rel.parts)
            for name in sorted(files):
                if TEST_FILE.match(name) or UNITTEST_FILE.match(name):
                    strict = 0 if TEST_FILE.match(name) else 1
                    key = (0 if in_tests else 1, strict, len(rel.parts), str(rel / name))
                    if best is None or key < best:
                        best, found = key, Path(directory, name)
    return found


def _uncount(tally: Tally) -> None:
    """One failure (or error) fewer: the canary's."""
    if tally.failed:
        tally.failed -= 1
    elif tally.errors:
        tally.errors -= 1
