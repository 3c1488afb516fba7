"""Running the repository's own tests, and reading what they said.

The command is the one the adapter fixed; nothing a model says reaches its command line. It runs on a
disposable copy of the candidate, inside the sandbox (tools/sandbox.py), with the canary planted
(oracle.py). A run passes only when at least one test ran, the canary failed as it must, the command
exited as that failure makes an honest runner exit (1; never 0) with no other failure or error in its
report, and no file of the candidate was written, replaced or deleted during the run.
Reading the runners' reports and output is the ecosystem's (TestFacts.read_results); a JUnit report is
copied for CI and the test_ids gate without the canary (tools/junit.py reads the format, naming no
runner), or written from the ecosystem's reading where the runner's results are not JUnit
(TestFacts.case_report).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Collection
from pathlib import Path

from agentic_codemod.adapters.types import ProcessResult, Runner, TestCommand, TestFacts
from agentic_codemod.models import VerificationResult
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.junit import report_root
from agentic_codemod.tools.repo_copy import Stamp
from agentic_codemod.tools.sandbox import Box
from agentic_codemod.tools.verification import cut_to
from agentic_codemod.workflow import oracle


def render(command: TestCommand, interpreter: Path, junit: str | None) -> list[str]:
    argv: list[str] = []
    for arg in command.argv:
        if "{junit}" in arg:
            if junit is not None:
                argv.append(arg.replace("{junit}", junit))
            continue
        argv.append(arg.replace("{interpreter}", str(interpreter)))
    return argv


def run_tests(
    command: TestCommand,
    *,
    interpreter: Path,
    copy: Path,
    stamp: Stamp,
    runner: Runner,
    box: Box,
    timeout_s: float,
    phase: str,
    reports_dir: Path,
    facts: TestFacts,
    source: Path | None = None,
    strict: Collection[str] = (),
    keep_bytes: int | None = None,
    sdk: str | None = None,
) -> VerificationResult:
    """Run the test command on the disposable copy (made with `stamp`) inside `box`, with the canary
    planted (with `sdk`, where the adapter can, asking where the tests' loader resolves it). Green needs:
    exit 1 with the canary's failure the only one reported, tests that ran, the canary failed, and no
    candidate file written during the run (a data file the candidate does not change, rewritten with its
    own bytes, is only listed: see repo_copy.touched)."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    junit = reports_dir / "junit.xml"
    junit.unlink(missing_ok=True)
    canary = oracle.plant(copy, command, facts, sdk)
    if canary is not None:
        repo_copy.stamp_file(copy, stamp, canary.file)  # rewriting the canary is tampering too
    argv = render(command, interpreter, box.inside(junit))
    if canary is not None and canary.named:  # a command that names its test files collects only those
        argv.append(canary.argument or canary.file)
    result: ProcessResult = runner(argv, cwd=copy, timeout_s=timeout_s)
    rewritten: list[str] = []
    tampered = repo_copy.touched(
        copy,
        stamp,
        facts.code_suffixes,
        shadowing=facts.shadowing,
        source=source,
        strict=strict,
        rewritten=rewritten,
    )
    # the ecosystem's reader: its runners' reports (or records in the copy), with their test ids
    counts, ids = facts.read_results(command, copy, junit if junit.exists() else None, result.output_tail)
    state, resolution = canary.read(counts, ids) if canary is not None else ("missing", None)
    kept = reports_dir.parent / f"junit-{phase}.xml"
    kept.unlink(missing_ok=True)  # an earlier run of this phase never stands for this one
    if canary is not None:  # for CI's test report and the test_ids gate: the repository's tests only
        keep_report(command, copy, junit, result.output_tail, canary.token, kept, facts)
    ran = counts is not None and (counts.passed + counts.failed + counts.errors) > 0
    # The canary fails in every run that can be green, so an honest runner exits 1 (a failure) and reports
    # no other failure or error. An exit 0 beside it says the exit status does not tell failures (a
    # conftest's `atexit` calling os._exit(0), a hook setting session.exitstatus, `|| true`): never clean.
    clean = (
        state == "failed"
        and result.exit_code == 1
        and counts is not None
        and not counts.failed + counts.errors
    )
    tail = result.output_tail
    if canary is not None and state == "failed":  # the repository's results only, for every reader
        tail = oracle.scrub(tail, canary.token, facts)
    tail = tail if result.error is None else f"{result.error}\n{tail}"
    if keep_bytes is not None:  # the readers had the whole output the runner kept; the record keeps less
        tail = cut_to(tail, keep_bytes)
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
        sdk_resolution=resolution,
        tampered=tampered,
        rewritten=rewritten,
    )


def keep_report(
    command: TestCommand, copy: Path, junit: Path, output: str, token: str, dest: Path, facts: TestFacts
) -> None:
    """The run's JUnit report without the canary at `dest`, where the test_ids gate compares the phases by
    id: the ecosystem's own document of each test's outcome where the runner's results are no JUnit
    report (TestFacts.case_report: jest's JSON, a TAP stream; copied as it was, jest's JSON read as XML
    was nothing, and the gate compared nothing), else the runner's JUnit report, if it wrote one."""
    made = None
    if facts.case_report is not None:
        made = facts.case_report(command, copy, junit if junit.exists() else None, output, token)
    if made is not None:
        ET.ElementTree(made).write(dest, encoding="utf-8", xml_declaration=True)
    elif junit.exists():
        without_canary(junit, token, dest)


def without_canary(junit: Path, token: str, dest: Path) -> None:
    """Copy a JUnit report without the canary's test case (and its counts) wherever it sits: in a
    <testsuite>, or straight in <testsuites> (node's top-level tests); nothing when the report is not
    one the readers read (a link, FIFO, folder or oversized file the tests put there)."""
    root = report_root(junit)
    if root is None:
        return
    tree = ET.ElementTree(root)
    for parent in list(root.iter()):
        for case in [c for c in parent.findall("testcase") if token in c.get("name", "")]:
            parent.remove(case)
            for attr in ("tests", "failures"):
                if parent.get(attr, "").isdigit():
                    parent.set(attr, str(max(int(parent.get(attr, "0")) - 1, 0)))
    tree.write(dest, encoding="utf-8", xml_declaration=True)


def baseline_problem(result: VerificationResult, facts: TestFacts) -> str | None:
    """Why a baseline proves no working test command, or None: it must have run tests (passing or not)
    and lost no test module to a missing test dependency. The ecosystem says which exit codes mean the
    runner ran nothing (TestFacts.not_a_test_run) and what names a missing dependency."""
    if result.timed_out or result.exit_code is None:
        return "the test command did not finish"
    if result.exit_code in facts.not_a_test_run:
        return f"the test command does not work (exit {result.exit_code})"
    missing = facts.missing_dependency(result.output_tail)
    if missing is not None:
        return f"a test dependency is missing from the verification environment: {missing}"
    if result.tests is None or (result.tests.passed + result.tests.failed + result.tests.errors) == 0:
        return f"the test command ran no test (exit {result.exit_code})"
    return None


def usable_baseline(result: VerificationResult, facts: TestFacts) -> bool:
    """A baseline proves there is a working test command: it ran tests (passing or not), none of its
    test modules failed to import for want of a module."""
    return baseline_problem(result, facts) is None


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
