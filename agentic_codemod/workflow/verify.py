"""Running the repository's own tests, and reading what they said.

The command is the one the adapter fixed; nothing a model says reaches its command line. It runs on a
disposable copy of the candidate, inside the sandbox (tools/sandbox.py), with the canary planted
(oracle.py). A run passes only when the command exits cleanly, at least one test ran, the canary
failed as it must, and no file of the candidate was written, replaced or deleted during the run.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from agentic_codemod.adapters.types import ProcessResult, Runner, TestCommand
from agentic_codemod.models import Tally, VerificationResult
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.repo_copy import Stamp
from agentic_codemod.tools.sandbox import Box
from agentic_codemod.workflow import oracle

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
) -> VerificationResult:
    """Run the test command on the disposable copy (made with `stamp`) inside `box`, with the canary
    planted. Green needs: a clean exit (the canary's own failure aside), tests that ran, the canary
    failed, and no candidate file written during the run."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    junit = reports_dir / "junit.xml"
    junit.unlink(missing_ok=True)
    canary = oracle.plant(copy, command)
    if canary is not None:
        repo_copy.stamp_file(copy, stamp, canary.file)  # rewriting the canary is tampering too
    argv = render(command, python, box.inside(junit))
    result: ProcessResult = runner(argv, cwd=copy, timeout_s=timeout_s)
    tampered = repo_copy.touched(copy, stamp, code_suffixes)
    ids = junit_case_ids(junit) if junit.exists() else []
    counts = read_junit(junit) if junit.exists() else counts_from_output(result.output_tail)
    state = canary.state_in(counts, ids, result.output_tail) if canary is not None else "missing"
    ran = counts is not None and (counts.passed + counts.failed + counts.errors) > 0
    clean = result.exit_code == 0 or (
        state == "failed"
        and result.exit_code == 1
        and counts is not None
        and not counts.failed + counts.errors
    )
    tail = result.output_tail if result.error is None else f"{result.error}\n{result.output_tail}"
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
    )


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
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("skipped") is not None:
            counts.skipped += 1
        elif case.find("failure") is not None:
            counts.failed += 1
            counts.failing.append(test_id)
        elif case.find("error") is not None:
            counts.errors += 1
            counts.failing.append(test_id)
        else:
            counts.passed += 1
    return counts


def counts_from_output(output: str) -> Tally | None:
    """unittest prints 'Ran N tests' then 'OK' or 'FAILED (failures=1, errors=2)'."""
    ran = re.search(r"^Ran (\d+) tests?", output, re.MULTILINE)
    if not ran:
        return None
    total = int(ran.group(1))
    failures = sum(int(n) for n in re.findall(r"(?:failures|errors)=(\d+)", output))
    skipped = sum(int(n) for n in re.findall(r"skipped=(\d+)", output))
    failed = min(failures, total)
    return Tally(passed=max(total - failed - skipped, 0), failed=failed, skipped=skipped)


def usable_baseline(result: VerificationResult) -> bool:
    """A baseline proves there is a working test command: it ran tests (passing or not)."""
    if result.timed_out or result.exit_code is None or result.exit_code in NOT_A_TEST_RUN:
        return False
    return result.tests is not None and (result.tests.passed + result.tests.failed + result.tests.errors) > 0


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
