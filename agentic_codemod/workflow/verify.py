"""Running the repository's own tests, and reading what they said.

The command is the one the adapter fixed; nothing a model says reaches its command line.
A run passes only when the command exits 0 *and* at least one test ran.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from agentic_codemod.adapters.types import ProcessResult, Runner, TestCommand
from agentic_codemod.models import Tally, VerificationResult

# pytest: 5 = no tests collected, 4 = usage error, 3 = internal error; 126/127 = cannot execute / not found.
NOT_A_TEST_RUN = {3, 4, 5, 126, 127}


def render(command: TestCommand, python: Path, junit: Path | None) -> list[str]:
    argv: list[str] = []
    for arg in command.argv:
        if "{junit}" in arg:
            if junit is not None:
                argv.append(arg.replace("{junit}", str(junit)))
            continue
        argv.append(arg.replace("{python}", str(python)))
    return argv


def run_tests(
    command: TestCommand,
    *,
    python: Path,
    cwd: Path,
    runner: Runner,
    timeout_s: float,
    phase: str,
    reports_dir: Path,
) -> VerificationResult:
    reports_dir.mkdir(parents=True, exist_ok=True)
    junit = reports_dir / f"junit-{phase}.xml"
    junit.unlink(missing_ok=True)
    argv = render(command, python, junit)
    result: ProcessResult = runner(argv, cwd=cwd, timeout_s=timeout_s)
    counts = read_junit(junit) if junit.exists() else counts_from_output(result.output_tail)
    ran = counts is not None and (counts.passed + counts.failed + counts.errors) > 0
    tail = result.output_tail if result.error is None else f"{result.error}\n{result.output_tail}"
    return VerificationResult(
        phase=phase,
        command=argv,
        exit_code=result.exit_code,
        duration_s=round(result.duration_s, 3),
        passed=result.ok and ran,
        timed_out=result.timed_out,
        output_tail=tail,
        tests=counts,
    )


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
    if new or (final.tests.failing == [] and final.exit_code != 0):
        return "introduced"
    return "pre-existing"
