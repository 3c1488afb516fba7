"""Running the repository's own tests, and reading what they said.

The command is the one the adapter fixed; nothing a model says reaches its command line. It runs on a
disposable copy of the candidate, inside the sandbox (tools/sandbox.py), with the canary planted
(oracle.py). A run passes only when the command exits cleanly, at least one test ran, the canary
failed as it must, and no file of the candidate was written, replaced or deleted during the run.
"""

from __future__ import annotations

import re
import secrets
import xml.etree.ElementTree as ET
from collections.abc import Collection
from pathlib import Path

from agentic_codemod.adapters.types import ProcessResult, Runner, TestCommand, TestFacts
from agentic_codemod.config import MAX_TEST_REPORT_BYTES
from agentic_codemod.models import Tally, VerificationResult
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.junit import count_case
from agentic_codemod.tools.repo_copy import Stamp
from agentic_codemod.tools.sandbox import Box
from agentic_codemod.workflow import oracle, subunit, trial_output

# pytest: 5 = no tests collected, 4 = usage error, 3 = internal error; 126/127 = cannot execute / not found.
NOT_A_TEST_RUN = {3, 4, 5, 126, 127}


def render(command: TestCommand, python: Path, junit: str | None) -> list[str]:
    argv: list[str] = []
    for arg in command.argv:
        if "{junit}" in arg:
            if junit is not None:
                argv.append(arg.replace("{junit}", junit))
            continue
        argv.append(arg.replace("{python}", str(python)))
    return argv


def run_tests(
    command: TestCommand,
    *,
    python: Path,
    copy: Path,
    stamp: Stamp,
    runner: Runner,
    box: Box,
    timeout_s: float,
    phase: str,
    reports_dir: Path,
    code_suffixes: tuple[str, ...] = (),
    source: Path | None = None,
    strict: Collection[str] = (),
    facts: TestFacts | None = None,
) -> VerificationResult:
    """Run the test command on the disposable copy (made with `stamp`) inside `box`, with the canary
    planted. Green needs: a clean exit (the canary's own failure aside), tests that ran, the canary
    failed, and no candidate file written during the run (a data file the candidate does not change,
    rewritten with its own bytes, is only listed: see repo_copy.touched)."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    junit = reports_dir / "junit.xml"
    junit.unlink(missing_ok=True)
    canary = oracle.plant(copy, command, facts)
    if canary is not None:
        repo_copy.stamp_file(copy, stamp, canary.file)  # rewriting the canary is tampering too
    argv = render(command, python, box.inside(junit))
    result: ProcessResult = runner(argv, cwd=copy, timeout_s=timeout_s)
    rewritten: list[str] = []
    tampered = repo_copy.touched(
        copy, stamp, code_suffixes, source=source, strict=strict, rewritten=rewritten
    )
    if facts is not None:  # the ecosystem's reader: its runners' reports, with their test ids
        counts, ids = facts.read_results(command, junit if junit.exists() else None, result.output_tail)
    else:
        ids = junit_case_ids(junit) if junit.exists() else []
        counts = read_junit(junit) if junit.exists() else counts_from_output(result.output_tail)
    if command.runner == "stestr":  # its own record of the run, in the copy: subunit
        counts, ids = read_stestr(copy)
    if command.runner == "trial":  # its result lines and problem report
        counts, ids = trial_output.read(result.output_tail) or (None, [])
    state = canary.state_in(counts, ids, result.output_tail) if canary is not None else "missing"
    if junit.exists() and canary is not None:  # for CI's test report: the repository's tests only
        without_canary(junit, canary.token, reports_dir.parent / f"junit-{phase}.xml")
    ran = counts is not None and (counts.passed + counts.failed + counts.errors) > 0
    clean = result.exit_code == 0 or (
        state == "failed"
        and result.exit_code == 1
        and counts is not None
        and not counts.failed + counts.errors
    )
    tail = result.output_tail
    if canary is not None and state == "failed":  # the repository's results only, for every reader
        tail = oracle.scrub(tail, canary.token)
    tail = tail if result.error is None else f"{result.error}\n{tail}"
    return VerificationResult(
        phase=phase,
        command=argv,
        exit_code=result.exit_code,
        duration_s=round(result.duration_s, 3),
        passed=clean and not result.timed_out and ran and state == "failed" and not tampered,
        timed_out=result.timed_out,
        output_tail=tail,
        tests=counts,
        isolation=box.isolation,
        canary=state,
        tampered=tampered,
        rewritten=rewritten,
    )


def read_stestr(copy: Path) -> tuple[Tally | None, list[str]]:
    """The tally and test ids of the newest run stestr recorded in the copy (.stestr/), or (None, [])
    when there is none, it leads out of the copy, or is too large to read."""
    stream = subunit.latest_stream(copy / ".stestr")
    if stream is None or not stream.resolve().is_relative_to(copy.resolve()):
        return None, []
    if stream.stat().st_size > MAX_TEST_REPORT_BYTES:
        return None, []
    read = subunit.read_stream(stream.read_bytes())
    return read if read is not None else (None, [])


def without_canary(junit: Path, token: str, dest: Path) -> None:
    """Copy a JUnit report without the canary's test case (and its counts)."""
    try:
        tree = ET.parse(junit)
    except ET.ParseError:
        return
    for suite in tree.getroot().iter("testsuite"):
        for case in [c for c in suite.findall("testcase") if token in c.get("name", "")]:
            suite.remove(case)
            for attr in ("tests", "failures"):
                if suite.get(attr, "").isdigit():
                    suite.set(attr, str(max(int(suite.get(attr, "0")) - 1, 0)))
    tree.write(dest, encoding="utf-8", xml_declaration=True)


def junit_case_ids(path: Path) -> list[str]:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return []
    return [f"{c.get('classname', '')}::{c.get('name', '')}" for c in root.iter("testcase")]


def read_junit(path: Path) -> Tally | None:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return None
    counts = Tally()
    for case in root.iter("testcase"):
        count_case(counts, f"{case.get('classname', '')}::{case.get('name', '')}", case)
    return counts


def counts_from_output(output: str) -> Tally | None:
    """unittest prints 'Ran N tests' then 'OK' or 'FAILED (failures=1, errors=2)'. The failing tests are
    named by id ('pkg.mod.Class.test_x', a subtest with its parameters) from the `-v` result lines
    ('test_x (pkg.mod.Class.test_x) ... FAIL') and the report headers ('ERROR: test_x (...)'); when the
    output was cut and fewer ids than failures are left, `failing` says so (`unnamed_failures`)."""
    ran = re.search(r"^Ran (\d+) tests?", output, re.MULTILINE)
    if not ran:
        return None
    total = int(ran.group(1))
    summary = output[ran.end() :]
    failures = sum(int(n) for n in re.findall(r"failures=(\d+)", summary))
    errors = sum(int(n) for n in re.findall(r"errors=(\d+)", summary))
    skipped = sum(int(n) for n in re.findall(r"skipped=(\d+)", summary))
    failed, errors = min(failures, total), min(errors, max(total - failures, 0))
    ids = [_unittest_id(*m) for m in UNITTEST_RESULT.findall(output) + UNITTEST_HEADER.findall(output)]
    failing = list(dict.fromkeys(ids))
    missing = failed + errors - len(failing)
    failing += [unnamed_failures(missing)] if missing > 0 else []
    return Tally(
        passed=max(total - failed - errors - skipped, 0),
        failed=failed,
        errors=errors,
        skipped=skipped,
        failing=failing,
    )


def unnamed_failures(count: int) -> str:
    """The stand-in id for failures whose names were cut from the output: unique to this run, so it never
    matches a baseline's id and classify() never calls such failures pre-existing."""
    return f"<{count} failing test(s) not named in the output tail, run {secrets.token_hex(4)}>"


# `-v` result lines: 'name (id) ... FAIL', a docstring line between, a subtest's '(params)' after.
UNITTEST_RESULT = re.compile(
    r"^ *(\S+) \(([\w.]+)\)((?: \([^\n]*\))?)(?:\n[^\n]*)? \.\.\. (?:FAIL|ERROR)$", re.MULTILINE
)
# Report headers: 'FAIL: name (id)', 'ERROR: name (id) (params)'.
UNITTEST_HEADER = re.compile(r"^(?:FAIL|ERROR): (\S+) \(([\w.]+)\)((?: \([^\n]*\))?)$", re.MULTILINE)
# What an import of a test module that failed on a missing module prints (pytest, unittest, stestr,
# trial: its loader in the traceback).
MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?")
IMPORT_FAILURE = re.compile(
    r"ImportError while importing test module|ERROR collecting|error(?:s)? during collection"
    r"|Failed to import test module|unittest\.loader\._FailedTest|Failures during discovery"
    r"|trial/runner\.py\", line \d+, in load"
)


def _unittest_id(name: str, where: str, params: str) -> str:
    """Python >= 3.11 prints the full id in the parentheses; older versions print the class."""
    test_id = where if where.endswith(f".{name}") else f"{where}.{name}"
    return test_id + params


def missing_test_module(output: str) -> str | None:
    """'ModuleNotFoundError: No module named 'x'' when a test module could not be imported or collected
    for want of a module (a missing test dependency), else None."""
    if not IMPORT_FAILURE.search(output):
        return None
    found = MISSING_MODULE.search(output)
    return f"ModuleNotFoundError: No module named '{found.group(1)}'" if found else None


def baseline_problem(
    result: VerificationResult, not_a_test_run: Collection[int] = frozenset(NOT_A_TEST_RUN)
) -> str | None:
    """Why a baseline proves no working test command, or None: it must have run tests (passing or not)
    and lost no test module to a missing test dependency. `not_a_test_run`: the adapter's exit codes
    that mean the runner ran nothing (TestFacts.not_a_test_run)."""
    if result.timed_out or result.exit_code is None:
        return "the test command did not finish"
    if result.exit_code in not_a_test_run:
        return f"the test command does not work (exit {result.exit_code})"
    missing = missing_test_module(result.output_tail)
    if missing is not None:
        return f"a test dependency is missing from the verification environment: {missing}"
    if result.tests is None or (result.tests.passed + result.tests.failed + result.tests.errors) == 0:
        return f"the test command ran no test (exit {result.exit_code})"
    return None


def usable_baseline(result: VerificationResult) -> bool:
    """A baseline proves there is a working test command: it ran tests (passing or not), none of its
    test modules failed to import for want of a module."""
    return baseline_problem(result) is None


def classify(baseline: VerificationResult | None, final: VerificationResult | None) -> str:
    """green | introduced | pre-existing | unknown — for the last verification against the baseline."""
    if final is None:
        return "unknown"
    if final.passed:
        return "green"
    if baseline is None or baseline.tests is None or final.tests is None:
        return "unknown"
    new = set(final.tests.failing) - set(baseline.tests.failing)
    if new or not final.tests.failing:
        return "introduced"
    return "pre-existing"
