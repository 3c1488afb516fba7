"""What a test run said, with test ids, from the report the runner wrote (or its TAP output).

    read_results(runner, report, output) -> (Tally | None, [test id, ...])

    node-test   JUnit XML (node --test-reporter=junit); ids "suite > … > test"; else the TAP on stdout.
                The TAP is read beside the JUnit report too: node writes no failure into that report for a
                suite whose own hook failed (`after` in a `describe`: its tests passed, the suite is
                `not ok`, failureType hookFailed), so such a suite is an error "<suite id>"; and when the TAP
                (its not-ok lines, its `# fail N` summary) names more failures than the report holds, one
                failure more is counted (see _unread_failures). Output only ever adds failures: a test
                printing `# fail 0` or an `ok` line cannot make a red run green, and a cut output (the
                tail is bounded) reads fewer of them, never more passes.
    vitest      JUnit XML; ids "<classname> > <name>" (classname is the test file)
    mocha       xunit XML; ids "<classname> > <name>" (classname is the suite title path)
    jest        --json report: testResults[].assertionResults[]; ids "<file> > <fullName>"; a test file
                jest calls failed (testResults[].status "failed") with no failed assertion is an error
                "<file>": it did not load, or a hook (afterAll) failed beside tests that all passed
    tape        its TAP on stdout: a test is a `# name` comment with the assertions under it, failed when
                one of them is `not ok`; ids "<name>" ("<name> (2)" for a repeated name); only a run that
                reached its plan and `# tests N` summary is read

None when there is no readable report and no TAP summary: a run whose results cannot be read proves
nothing. Reports larger than MAX_TEST_REPORT_BYTES are not read.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from secrets import token_hex
from typing import Any

from agentic_codemod import json_input
from agentic_codemod.config import MAX_TEST_REPORT_BYTES
from agentic_codemod.models import Tally
from agentic_codemod.tools import junit
from agentic_codemod.tools.junit import count_case
from agentic_codemod.tools.untrusted_file import read_regular

TAP_LINE = re.compile(
    r"^(?P<indent> *)(?P<ok>not ok|ok) \d+ - (?P<name>.*?)(?: # (?P<directive>SKIP|TODO)\b.*)?$"
)
TAP_SUBTEST = re.compile(r"^(?P<indent> *)# Subtest: (?P<name>.*)$")
TAPE_ASSERT = re.compile(r"^(?P<ok>not ok|ok) \d+\b(?P<message>.*?)(?: # (?P<directive>SKIP|TODO)\b.*)?$")
TAPE_PLAN = re.compile(r"^1\.\.\d+$")
SUMMARY_FAIL = re.compile(r"^# fail\s+(\d+)\s*$", re.MULTILINE)  # tape's and node's TAP summary
SKIPPED_TEST = TAPE_ASSERT.match("ok 0 skipped # SKIP")


def read_results(runner: str, report: Path | None, output: str) -> tuple[Tally | None, list[str]]:
    text = _report(report)
    if text is not None and runner == "jest":
        return _jest(text)
    if text is not None:
        tally, ids = _junit(text)
        if tally is not None:
            if runner == "node-test":
                _checked_against_tap(output, tally, ids)
            return tally, ids
    if runner == "node-test":
        return _tap(output)
    if runner == "tape":
        return _tape(output)
    return None, []


def _report(report: Path | None) -> str | None:
    """The report's text: the tests wrote the reports folder, so only a regular file (never through a
    link to a host file, never a FIFO) of at most MAX_TEST_REPORT_BYTES."""
    data = None if report is None else read_regular(report, MAX_TEST_REPORT_BYTES)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _junit(text: str) -> tuple[Tally | None, list[str]]:
    root = junit.parse(text)  # None: not XML, or nested past what the walk below may recurse
    if root is None:
        return None, []
    tally, ids = Tally(), []

    def walk(node: ET.Element, path: list[str]) -> None:
        for child in node:
            if child.tag in ("testsuite", "testsuites"):
                name = child.get("name", "")
                walk(child, [*path, name] if child.tag == "testsuite" and name else path)
            elif child.tag == "testcase":
                where = child.get("classname", "")
                prefix = path if path else ([where] if where and where != "test" else [])
                test_id = " > ".join([*prefix, child.get("name", "")])
                ids.append(test_id)
                count_case(tally, test_id, child)
            else:  # node 20 wraps a file's own failure (a top-level hook) in <undefined name="root">
                walk(child, path)

    if root.tag == "testsuites":
        walk(root, [])
    else:  # a single <testsuite> (mocha's xunit)
        wrapper = ET.Element("testsuites")
        wrapper.append(root)
        walk(wrapper, [])
    return tally, ids


def _jest(text: str) -> tuple[Tally | None, list[str]]:
    try:
        document: Any = json_input.loads(text)
    except ValueError:
        return None, []
    if not isinstance(document, dict) or not isinstance(document.get("testResults"), list):
        return None, []
    tally, ids = Tally(), []
    for suite in document["testResults"]:
        if not isinstance(suite, dict):
            continue
        file = str(suite.get("name", ""))
        assertions = [c for c in suite.get("assertionResults") or [] if isinstance(c, dict)]
        if suite.get("status") == "failed" and not any(c.get("status") == "failed" for c in assertions):
            # "Test suite failed to run": a file that did not load, or a failing afterAll/beforeAll hook
            # beside tests that all passed; jest exits 1 for it, and so must the tally
            tally.errors += 1
            tally.failing.append(file)
            ids.append(file)
        for case in assertions:
            test_id = f"{file} > {case.get('fullName') or case.get('title', '')}"
            ids.append(test_id)
            status = case.get("status")
            if status == "passed":
                tally.passed += 1
            elif status == "failed":
                tally.failed += 1
                tally.failing.append(test_id)
            else:
                tally.skipped += 1
    return tally, ids


def _tap(output: str) -> tuple[Tally | None, list[str]]:
    """node's TAP: leaf tests (a suite's own ok line follows its subtests, one level less indented), and a
    failed suite none of whose subtests failed (its own hook failed) as an error."""
    if not any(line.startswith("# tests ") for line in output.splitlines()):
        return None, []
    tally, ids = Tally(), []
    results = _tap_results(output)
    for index, (_, test_id, found, _describe) in enumerate(results):
        if _is_suite(results, index):
            continue
        ids.append(test_id)
        if found.group("directive"):
            tally.skipped += 1
        elif found.group("ok") == "ok":
            tally.passed += 1
        else:
            tally.failed += 1
            tally.failing.append(test_id)
    for suite in _failed_suites(results):
        tally.errors += 1
        tally.failing.append(suite)
        ids.append(suite)
    _unread_failures(output, tally, max(tally.failed + tally.errors, _counted_by_node(results)))
    return tally, ids


def _checked_against_tap(output: str, tally: Tally, ids: list[str]) -> None:
    """node's JUnit report checked against its TAP on stdout. A failed suite the report does not name is an
    error (a suite-level hook). One failure more when the TAP's failed lines, counted as the readers count
    them (leaves and failed suites without a failed subtest), outnumber the report's; or when node's
    `# fail N` is more than both the report and the TAP show (node also counts a test whose subtest
    failed, and a cut output shows fewer lines: neither is a failure nobody read)."""
    results = _tap_results(output)
    for suite in _failed_suites(results):
        if suite not in tally.failing:
            tally.errors += 1
            tally.failing.append(suite)
            ids.append(suite)
    read = tally.failed + tally.errors
    printed = sum(1 for i, r in enumerate(results) if _failed(r[2]) and not _is_suite(results, i))
    printed += len(_failed_suites(results))
    if printed > read:
        _unread_failures(output, tally, read, printed)
        return
    _unread_failures(output, tally, max(read, _counted_by_node(results)))


TapResult = tuple[int, str, re.Match[str], bool]  # depth, test id, the `ok`/`not ok` line, a describe?


def _tap_results(output: str) -> list[TapResult]:
    """node's TAP result lines in order, each with its depth, its id ("suite > … > test", from the
    `# Subtest:` lines open at that point) and whether its YAML block says `type: 'suite'` (a describe)."""
    stack: list[str] = []
    results: list[TapResult] = []
    for line in output.splitlines():
        sub = TAP_SUBTEST.match(line)
        if sub:
            stack[len(sub.group("indent")) // 4 :] = [sub.group("name")]
            continue
        found = TAP_LINE.match(line)
        if found:
            depth = len(found.group("indent")) // 4
            results.append((depth, " > ".join([*stack[:depth], found.group("name")]), found, False))
        elif results and line.strip() == "type: 'suite'":
            results[-1] = (*results[-1][:3], True)
    return results


def _counted_by_node(results: list[TapResult]) -> int:
    """The failures node's `# fail N` counts among these lines: every failed test, a test whose subtest
    failed too, but no describe suite."""
    return sum(1 for r in results if _failed(r[2]) and not r[3])


def _is_suite(results: list[TapResult], index: int) -> bool:
    return index > 0 and results[index - 1][0] > results[index][0]


def _failed(found: re.Match[str]) -> bool:
    return found.group("ok") == "not ok" and not found.group("directive")


def _failed_suites(results: list[TapResult]) -> list[str]:
    """The ids of failed suites with no failed line among their subtests (the lines before theirs, more
    indented): node failed the suite itself, a hook of its (`after`), and its JUnit report says nothing."""
    failed = []
    for index, (depth, test_id, found, _describe) in enumerate(results):
        if not (_is_suite(results, index) and _failed(found)):
            continue
        below = index - 1
        while below >= 0 and results[below][0] > depth and not _failed(results[below][2]):
            below -= 1
        if below < 0 or results[below][0] <= depth:  # reached the suite's start: no subtest failed
            failed.append(test_id)
    return failed


def _tape(output: str) -> tuple[Tally | None, list[str]]:
    """tape's TAP: assertions grouped under the `# name` comment before them, one test per group."""
    lines = output.splitlines()
    plan = [i for i, line in enumerate(lines) if TAPE_PLAN.match(line.strip())]
    if not plan or not any(line.startswith("# tests ") for line in lines[plan[-1] :]):
        return None, []  # the run did not reach its end (a crash, a process.exit): unknown
    groups: list[tuple[str, list[re.Match[str] | None]]] = []
    for line in lines[: plan[-1]]:
        if line.startswith("# SKIP "):  # a skipped test: its name, no assertions
            groups.append((line[7:].strip(), [SKIPPED_TEST]))
            continue
        if line.startswith("# "):
            groups.append((line[2:].strip(), []))
            continue
        found = TAPE_ASSERT.match(line)
        if found:
            if not groups:
                groups.append(("(top level)", []))
            groups[-1][1].append(found)
    tally, ids, seen = Tally(), [], dict[str, int]()
    for name, asserts in groups:
        if not asserts:
            continue  # a test holding only subtests, or a comment
        seen[name] = seen.get(name, 0) + 1
        test_id = name if seen[name] == 1 else f"{name} ({seen[name]})"
        ids.append(test_id)
        read = [a for a in asserts if a is not None]
        if any(a.group("ok") == "not ok" and a.group("directive") != "TODO" for a in read):
            tally.failed += 1
            tally.failing.append(test_id)
        elif all(a.group("directive") == "SKIP" for a in read):
            tally.skipped += 1
        else:
            tally.passed += 1
    # tape prints messages unescaped: a failure whose message ends "# TODO" reads as a TODO here, but
    # tape's own summary counts it as failed, and so does the check against that summary
    failures = [a for _, asserts in groups for a in asserts if a is not None and a.group("ok") == "not ok"]
    _unread_failures(output, tally, sum(1 for a in failures if a.group("directive") != "TODO"))
    return tally, ids


def _unread_failures(output: str, tally: Tally, read: int, printed: int = 0) -> None:
    """The runner's own summary (`# fail M`), or `printed` failures seen otherwise, name more failures than
    were read (the output was cut in the middle, lines were hidden, the report left one out): one failing
    test more, with an id unique to this run, so an unread failure is never taken for a pass or for a
    failure the baseline had. The largest `# fail M` counts: a test printing `# fail 0` after node's own
    summary only ever adds failures."""
    told = max([printed, *(int(n) for n in SUMMARY_FAIL.findall(output))])
    if told > read:
        tally.failed += 1
        tally.failing.append(f"<{told - read} failure(s) not read from the output, run {token_hex(4)}>")
