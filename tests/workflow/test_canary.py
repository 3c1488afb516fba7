"""The canary: planted where the runner collects, read from JUnit or unittest output, cut from the
output the coder, the reviewer and a lesson read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import ADAPTER
from agentic_codemod.adapters.types import TestCommand as Command
from agentic_codemod.models import Tally
from agentic_codemod.workflow import oracle

FACTS = ADAPTER.test_facts

SUITE = "import unittest\n\ndef test_ok():\n    assert 1\n\ndef test_bad():\n    assert 1 == 2\n"


def suite(tmp_path: Path) -> tuple[Path, oracle.Canary]:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(SUITE)
    command = Command(argv=["{interpreter}", "-m", "pytest"], source="t", runner="pytest")
    canary = oracle.plant(tmp_path, command, FACTS)
    assert canary is not None and canary.file.startswith("tests/test_c")
    return tmp_path, canary


def test_pytest_output_keeps_the_repositorys_failure_and_loses_the_canarys(tmp_path: Path) -> None:
    root, canary = suite(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert canary.token in done.stdout and "3 failed, 1 passed" in done.stdout  # the canary's two
    text = oracle.scrub(done.stdout, canary.token, FACTS)
    assert canary.token not in text
    assert "FAILED tests/test_a.py::test_bad" in text and "1 failed, 1 passed" in text
    assert text.rstrip().endswith("cut from this output]")


def test_unittest_output_reads_ok_when_only_the_canary_failed(tmp_path: Path) -> None:
    root, canary = suite(tmp_path)
    (root / "tests" / "test_a.py").write_text("import unittest\n")
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-v", "-s", "tests"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert "FAILED (failures=1, errors=1)" in done.stderr  # the canary's assertion and its exception
    command = Command(
        argv=["{interpreter}", "-m", "unittest", "discover", "-v"], source="t", runner="unittest"
    )
    tally, ids = FACTS.read_results(command, root, None, done.stderr)  # `-v`: every test's result line
    token = canary.token
    assert tally is not None and (tally.failed, tally.errors) == (1, 1)
    case = f"test_{token}.Test{token.capitalize()}.test_{token}"
    assert sorted(ids) == [case, f"{case}_raises"]  # the canary's, the only tests
    assert canary.state_in(tally, ids) == "failed" and (tally.failed, tally.errors) == (0, 0)
    assert tally.failing == []
    text = oracle.scrub(done.stderr, canary.token, FACTS)
    assert canary.token not in text and "\nOK\n" in text


def test_a_canary_that_never_ran_is_missing(tmp_path: Path) -> None:
    _root, canary = suite(tmp_path)
    assert canary.state_in(Tally(passed=3), ["tests.test_a::test_ok"]) == "missing"
    assert canary.state_in(None, []) == "missing"


def test_suspects_name_pytest_hooks_and_path_hooks_in_the_copy(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text("def pytest_runtest_makereport(item, call):\n    pass\n")
    (tmp_path / "evil.pth").write_text("import os\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -q\n")  # nothing that rewrites results
    assert oracle.suspects(tmp_path, FACTS) == [
        "evil.pth: path hook",
        "tests/conftest.py: pytest_runtest_makereport",
    ]


def test_a_command_naming_test_files_gets_the_canary_beside_one_and_on_its_command_line(
    tmp_path: Path,
) -> None:
    """pytest given files collects only those: the canary goes beside a named file, its path is added to
    the command (verify.run_tests appends Canary.file), and the real pytest run collects it and fails it."""
    for rel in ("tests/test_a.py", "tests/deep/test_b.py", "test_top.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(SUITE)
    argv = ["{interpreter}", "-m", "pytest", "-q", "./tests/deep/test_b.py"]
    canary = oracle.plant(tmp_path, Command(argv=argv, source="t", runner="pytest"), FACTS)
    assert canary is not None and canary.named and canary.file.startswith("tests/deep/test_c"), canary
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}
    run = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/deep/test_b.py",
        canary.file,
    ]
    done = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=env, check=False)
    assert f"{canary.file}::" in done.stdout and "3 failed, 1 passed" in done.stdout, done.stdout


def test_a_named_file_behind_a_link_is_never_where_the_canary_goes(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_x.py").write_text(SUITE)
    root = tmp_path / "repo"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "link").symlink_to(outside, target_is_directory=True)
    argv = ["{interpreter}", "-m", "pytest", "tests/link/test_x.py"]
    assert oracle.plant(root, Command(argv=argv, source="t", runner="pytest"), FACTS) is None
    assert sorted(p.name for p in outside.iterdir()) == ["test_x.py"]


@pytest.mark.parametrize(
    ("args", "real", "collected"),
    [
        (
            ["discover", "-v", "-p", "*tests.py", "pkg", "--top-level-directory", "."],
            "base_tests.py",
            "test_{t}_tests.py",
        ),
        (["discover", "--pattern=*_check.py", "-s", "pkg"], "real_check.py", "_{t}__check.py"),
        (["discover", "-pcheck*.py", "pkg"], "checkreal.py", "check_{t}_.py"),
        (["discover", "pkg", "*tests.py"], "base_tests.py", "test_{t}_tests.py"),  # discover's 2nd argument
        (["discover", "-v", "-s", "pkg"], "test_real.py", "test_{t}.py"),  # unittest's own default, test*.py
    ],
)
def test_a_unittest_canary_matches_the_commands_own_pattern_and_is_collected(
    tmp_path: Path, args: list[str], real: str, collected: str
) -> None:
    """mkdocs runs `unittest discover -p '*tests.py'` over tests named base_tests.py: before, no file was a
    test file to the tool and the canary test_<token>.py was never collected (the corpus run: "the canary
    test that must fail went missing ... no result can be trusted", on a repository hiding nothing)."""
    for rel in ("pkg/__init__.py", "pkg/tests/__init__.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    test_file = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    (tmp_path / "pkg" / "tests" / real).write_text(test_file)
    command = Command(argv=["{interpreter}", "-m", "unittest", *args], source="t", runner="unittest")
    canary = oracle.plant(tmp_path, command, FACTS)
    assert canary is not None, "no file the command collects was found for the canary"
    assert canary.file == f"pkg/tests/{collected.replace('{t}', canary.token)}"
    argv = [sys.executable, "-m", "unittest", *args]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert canary.token in done.stderr and "Ran 3 tests" in done.stderr, done.stderr


# helper-37: a conftest hook that passes every failure but an AssertionError: the canary's assertion
# stayed red, and an AttributeError the bump caused in the repository's code read as passed (exit 0).
SPARES_ASSERTIONS = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None and not call.excinfo.errisinstance(AssertionError):
        report.outcome = "passed"
"""


def test_a_hook_that_flips_failures_of_one_kind_flips_one_of_the_canarys_tests(tmp_path: Path) -> None:
    root, canary = suite(tmp_path)
    (root / "tests" / "conftest.py").write_text(SPARES_ASSERTIONS)
    junit = root / "junit.xml"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", "tests"]
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True)
    command = Command(argv=["{interpreter}", "-m", "pytest"], source="t", runner="pytest")
    tally, ids = FACTS.read_results(command, root, junit, done.stdout)
    assert tally is not None and canary.state_in(tally, ids) == "passed", (tally, ids)


# twisted.trial 26.10.0 (--reporter=bwverbose) on one passing test and the planted canary, recorded; the
# tracebacks cut to their last lines.
TRIAL_OUTPUT = """tests.test_a.T.test_ok ... [OK]
tests.test_c33c3e54fac.TestC33c3e54fac.test_c33c3e54fac ... [FAILURE]
tests.test_c33c3e54fac.TestC33c3e54fac.test_c33c3e54fac_raises ... [ERROR]

===============================================================================
[FAIL]
Traceback (most recent call last):
  File "/dev/shm/trialraw/tests/test_c33c3e54fac.py", line 6, in test_c33c3e54fac
    self.assertEqual(149, 1622)
builtins.AssertionError: 149 != 1622

tests.test_c33c3e54fac.TestC33c3e54fac.test_c33c3e54fac
===============================================================================
[ERROR]
Traceback (most recent call last):
  File "/dev/shm/trialraw/tests/test_c33c3e54fac.py", line 9, in test_c33c3e54fac_raises
    raise AttributeError(561)
builtins.AttributeError: 561

tests.test_c33c3e54fac.TestC33c3e54fac.test_c33c3e54fac_raises
-------------------------------------------------------------------------------
Ran 3 tests in 0.002s

FAILED (failures=1, errors=1, successes=1)
"""


def test_trial_output_loses_both_of_the_canarys_problems_and_their_counts() -> None:
    """helper-40: the scrubbed summary said `FAILED (errors=1, successes=1)` where the repository's one
    test passed (the canary's [ERROR] block was cut, its count stayed)."""
    text = oracle.scrub(TRIAL_OUTPUT, "c33c3e54fac", FACTS)
    assert "c33c3e54fac" not in text
    assert "[ERROR]" not in text and "[FAIL]" not in text
    assert "\nPASSED (successes=1)\n" in text, text


def test_a_runner_that_died_before_writing_any_report_is_red_and_named_not_called_rigged() -> None:
    """pytest-flask's pytest11 plugin imports flask's `_request_ctx_stack`, gone in Flask 3: pytest died
    as it started (exit 1, an uncaught ImportError, no report). The canary was "missing" from a run with
    exit 1, read as a completed run hiding results: "something rewrites or hides test results", and the
    bump's own break was never named (helper-45). A run with a report that lost the canary still is."""
    from agentic_codemod.models import VerificationResult
    from agentic_codemod.workflow import pipeline, test_runs

    tail = (
        "  File \"pytest_flask/fixtures.py\", line 6\nImportError: cannot import name '_request_ctx_stack'\n"
    )
    died = VerificationResult(
        phase="iteration-1", command=["pytest"], exit_code=1, duration_s=1.0, passed=False,
        output_tail=tail, canary="missing",
    )  # fmt: skip
    assert test_runs.untrusted(None, died) is None  # type: ignore[arg-type]  # (state unread on this path)
    assert pipeline.no_test_failed(died) == (
        "exit 1, no failing test id; its output ends: ImportError: cannot import name '_request_ctx_stack'"
    )


@pytest.mark.parametrize("layout", ["", "src"])
def test_a_unittest_command_naming_modules_gets_the_canary_named_beside_them(
    tmp_path: Path, layout: str
) -> None:
    """isodate runs `python -m unittest -v isodate.tests.test_suite`: unittest runs only the modules it is
    given, and the canary planted beside them was never run, so every run ended "the canary went missing
    ... no result can be trusted" on a repository hiding nothing (helper-45)."""
    base = tmp_path / layout
    for rel in ("pkg/__init__.py", "pkg/tests/__init__.py"):
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text("")
    (base / "pkg" / "tests" / "test_suite.py").write_text(
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    )
    argv = ["{interpreter}", "-m", "unittest", "-v", "pkg.tests.test_suite.T"]
    canary = oracle.plant(tmp_path, Command(argv=argv, source="t", runner="unittest"), FACTS)
    assert canary is not None and canary.named
    assert canary.argument == f"pkg.tests.{Path(canary.file).stem}"
    assert canary.file == (f"{layout}/" if layout else "") + f"pkg/tests/{Path(canary.file).name}"
    env = {**os.environ, "PYTHONPATH": str(base)}
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", "pkg.tests.test_suite.T", canary.argument],
        cwd=tmp_path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert canary.token in done.stderr and "test_a" in done.stderr, done.stderr
