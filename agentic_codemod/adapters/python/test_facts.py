"""What the core's gates need to know about Python code and its tests (adapters/types.py TestFacts).

is_test_file(path)                    test_*.py, *_test.py, conftest.py, or test*.py under tests/ or test/
canary(command, sibling, token)       a unittest case that must fail (pytest, unittest and stestr all
                                      collect it), named test_<token>.py (<token>_test.py beside a
                                      *_test.py file under pytest)
read_results(command, report, output) JUnit XML (pytest), unittest -v output, stestr's subunit record
                                      (read by workflow/verify.py until that reading moves here)
detect(root)                          a Python dependency file or setup.py at the root
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.types import Canary, TestCommand, TestFacts
from agentic_codemod.config import CODE_SUFFIXES
from agentic_codemod.models import Tally

SOURCE_SUFFIXES = (".py",)
AST_GREP_LANGUAGES: dict[str, tuple[str, ...]] = {"python": SOURCE_SUFFIXES}
TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")
CONFIG_FILES = (
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
    ".stestr.conf",
)
# pytest: 5 = no tests collected, 4 = usage error, 3 = internal error; 126/127 = cannot execute / not found.
NOT_A_TEST_RUN = frozenset({3, 4, 5, 126, 127})
DETECTED_BY = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile", "tox.ini")


def is_test_file(path: str) -> bool:
    """pytest's names (test_*.py, *_test.py) and unittest discover's default pattern (test*.py, a
    top-level tests.py too)."""
    name = PurePosixPath(path).name
    return bool(TEST_FILE.match(name)) or (name.startswith("test") and name.endswith(".py"))


def canary(command: TestCommand, sibling: str, token: str) -> Canary:
    beside_suffixed = PurePosixPath(sibling).name.endswith("_test.py") and command.runner == "pytest"
    name = f"{token}_test.py" if beside_suffixed else f"test_{token}.py"
    return Canary(
        name,
        "import unittest\n\n\n"
        f"class Test{token.capitalize()}(unittest.TestCase):\n"
        f"    def test_{token}(self):\n"
        f"        self.assertEqual({secrets.randbelow(900) + 100}, {secrets.randbelow(900) + 1000})\n",
    )


def read_results(command: TestCommand, report: Path | None, output: str) -> tuple[Tally | None, list[str]]:
    from agentic_codemod.workflow import verify  # the readers still live there (issue 14: to move here)

    if report is not None and report.is_file():
        return verify.read_junit(report), verify.junit_case_ids(report)
    return verify.counts_from_output(output), []


def tamper(path: str, before: str | None, after: str | None, is_test: bool) -> list[str]:
    """Nothing beyond what the core's tamper gate checks for Python itself (workflow/gates.py and
    oracle_tamper.py: pytest hooks, config, skip markers; issue 14: to move here)."""
    return []


def runner_of(tokens: list[str]) -> str | None:
    from agentic_codemod.adapters.python.ci_config import runner_of as declared_runner

    found = declared_runner(tokens)
    return found[0] if found is not None else None


def detect(root: Path) -> bool:
    return any((root / name).is_file() for name in DETECTED_BY) or any(root.glob("requirements*.txt"))


TEST_FACTS = TestFacts(
    source_suffixes=SOURCE_SUFFIXES,
    ast_grep_languages=AST_GREP_LANGUAGES,
    code_suffixes=CODE_SUFFIXES,
    is_test_file=is_test_file,
    config_files=CONFIG_FILES,
    not_a_test_run=NOT_A_TEST_RUN,
    read_results=read_results,
    canary=canary,
    tamper=tamper,
    runner_of=runner_of,
    rule_risk=None,  # workflow/rule_risk.py reads Python's syntax tree itself
)
# Every sandboxed process of a Python run: no bytecode written into the copy, no pytest cache.
SANDBOX_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTEST_ADDOPTS": "-p no:cacheprovider"}
