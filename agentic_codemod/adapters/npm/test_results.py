"""What a test run said, with test ids, from the report the runner wrote (or its TAP output).

    read_results(runner, report, output) -> (Tally | None, [test id, ...])

    node-test   JUnit XML (node --test-reporter=junit); ids "suite > … > test"; else the TAP on stdout
    vitest      JUnit XML; ids "<classname> > <name>" (classname is the test file)
    mocha       xunit XML; ids "<classname> > <name>" (classname is the suite title path)
    jest        --json report: testResults[].assertionResults[]; ids "<file> > <fullName>"; a test file
                that failed to load (testResults[].status "failed" without assertions) is an error
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
        found = _junit(text)
        if found[0] is not None:
            return found
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
        assertions = suite.get("assertionResults") or []
        if suite.get("status") == "failed" and not assertions:
            tally.errors += 1
            tally.failing.append(file)
            ids.append(file)
            continue
        for case in assertions:
            if not isinstance(case, dict):
                continue
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
    """node's TAP: leaf tests only (a suite's own ok line follows its subtests, one level less indented)."""
    lines = output.splitlines()
    if not any(line.startswith("# tests ") for line in lines):
        return None, []
    tally, ids, stack = Tally(), [], list[str]()
    results = []
    for line in lines:
        sub = TAP_SUBTEST.match(line)
        if sub:
            depth = len(sub.group("indent")) // 4
            stack[depth:] = [sub.group("name")]
            continue
        found = TAP_LINE.match(line)
        if found:
            depth = len(found.group("indent")) // 4
            results.append((depth, found))
    for index, (depth, found) in enumerate(results):
        is_suite = index > 0 and results[index - 1][0] > depth
        if is_suite:
            continue
        test_id = " > ".join([*stack[:depth], found.group("name")])
        ids.append(test_id)
        if found.group("directive"):
            tally.skipped += 1
        elif found.group("ok") == "ok":
            tally.passed += 1
        else:
            tally.failed += 1
            tally.failing.append(test_id)
    _unread_failures(output, tally, tally.failed)
    return tally, ids


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


def _unread_failures(output: str, tally: Tally, read: int) -> None:
    """The runner's own summary (`# fail M`) names more failures than the lines read (the output was cut
    in the middle, or lines were hidden): one failing test more, with an id unique to this run, so an
    unread failure is never taken for a pass or for a failure the baseline had."""
    summary = SUMMARY_FAIL.findall(output)
    if summary and int(summary[-1]) > read:
        tally.failed += 1
        tally.failing.append(
            f"<{int(summary[-1]) - read} failure(s) not read from the output, run {token_hex(4)}>"
        )
