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
    jest        --json report: testResults[].assertionResults[]; ids "<file> > <describe> > … > <title>"
                (ancestorTitles; the file relative to the copy it ran in); a test file jest calls failed
                (testResults[].status "failed") with no failed assertion is an error "<file>": it did
                not load, or a hook (afterAll) failed beside tests that all passed. The summary jest
                printed (`Tests:  N failed, …`) only ever adds a failure where it names more than the
                report (see _checked_against_jest_summary)
    tape        its TAP on stdout: a test is a `# name` comment with the assertions under it, failed when
                one of them is `not ok`; ids "<name>" ("<name> (2)" for a repeated name); only a run that
                reached its plan and `# tests N` summary is read

None when there is no readable report and no TAP summary: a run whose results cannot be read proves
nothing. Reports larger than MAX_TEST_REPORT_BYTES are not read.

    case_report(runner, report, output, token) -> JUnit document | None

The test_ids gate compares JUnit reports by id (reports/junit-<phase>.xml). For the runs whose results
are not a JUnit report (jest's JSON, tape's TAP, node's TAP when its JUnit report is missing) the same
reading is written as one, so every npm runner gives the gate each test's outcome.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from secrets import token_hex
from typing import Any, NamedTuple

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
JEST_SUMMARY_FAIL = re.compile(
    r"^[ \t]*Tests:[ \t]+(\d{1,9}) failed\b", re.MULTILINE
)  # `Tests:  3 failed, 1 passed, …`
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def read_results(
    runner: str, report: Path | None, output: str, roots: tuple[str, ...] = ()
) -> tuple[Tally | None, list[str]]:
    """`roots`: where the repository's copy was when the runner ran (jest names each test file by its
    absolute path): file names under one are read relative to it, so a test keeps its id from the
    baseline's copy to the candidate's."""
    text = _report(report)
    if text is not None and runner == "jest":
        cases = _jest_cases(text, roots)
        if cases is None:
            return None, []
        read, read_ids = _tallied(cases)
        _checked_against_jest_summary(output, read)
        return read, read_ids
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


class Case(NamedTuple):
    """One test and its outcome (passed | failed | error | skipped), as a reader read it: `file` is the
    test file where the report names one (jest), `name` the test within it ("suite > … > test")."""

    file: str
    name: str
    status: str

    @property
    def id(self) -> str:
        return f"{self.file} > {self.name}" if self.file and self.name else self.file or self.name


def _tallied(cases: list[Case]) -> tuple[Tally, list[str]]:
    tally, ids = Tally(), []
    for case in cases:
        ids.append(case.id)
        if case.status == "passed":
            tally.passed += 1
        elif case.status == "skipped":
            tally.skipped += 1
        else:
            tally.failed += case.status == "failed"
            tally.errors += case.status == "error"
            tally.failing.append(case.id)
    return tally, ids


def case_report(
    runner: str, report: Path | None, output: str, token: str, roots: tuple[str, ...] = ()
) -> ET.Element | None:
    """The run's tests, each with its outcome, as a JUnit document (<skipped/>, <failure/>, <error/>), the
    canary's left out: what the test_ids gate compares by id (review_gates.kept_passing_gate), for the
    runs whose report is not JUnit: jest's --json, tape's TAP, node's TAP where node wrote no readable
    JUnit report. Without it the gate had no ids for such a runner and compared nothing (a test the
    app ran at baseline and skipped on the target: exit 0). None where the runner's own JUnit report
    is the one to keep (vitest, mocha's xunit, node's), and when nothing can be read."""
    text = _report(report)
    cases: list[Case] | None = None
    if runner == "jest":
        cases = None if text is None else _jest_cases(text, roots)
    elif runner == "tape" or (runner == "node-test" and (text is None or junit.parse(text) is None)):
        read = _tap_cases(output) if runner == "node-test" else _tape_cases(output)
        cases = None if read is None else read[0]
    if cases is None:
        return None
    root = ET.Element("testsuites")
    suites: dict[str, ET.Element] = {}
    for case in cases:
        if token in case.id:
            continue
        file = junit.xml_text(case.file)
        if file not in suites:
            suites[file] = ET.SubElement(root, "testsuite", name=file)
        node = ET.SubElement(
            suites[file], "testcase", classname=file, name=junit.xml_text(case.name or case.file)
        )
        if case.status != "passed":
            ET.SubElement(node, "failure" if case.status == "failed" else case.status)
    return root


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


def _jest_cases(text: str, roots: tuple[str, ...]) -> list[Case] | None:
    """jest's --json report: a test per assertion result, its id the test file (relative to the copy)
    and its describe titles (ancestorTitles) and title, "test/a.test.js > client > fetches"; pending,
    todo, skipped and disabled tests are skipped. None when it is not such a report."""
    try:
        document: Any = json_input.loads(text)
    except ValueError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("testResults"), list):
        return None
    cases: list[Case] = []
    for suite in document["testResults"]:
        if not isinstance(suite, dict):
            continue
        file = _relative(str(suite.get("name", "")), roots)
        listed = suite.get("assertionResults")
        assertions = [c for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
        if suite.get("status") == "failed" and not any(c.get("status") == "failed" for c in assertions):
            # "Test suite failed to run": a file that did not load, or a failing afterAll/beforeAll hook
            # beside tests that all passed; jest exits 1 for it, and so must the tally
            cases.append(Case(file, "", "error"))
        for case in assertions:
            status = case.get("status")
            outcome = status if status in ("passed", "failed") else "skipped"
            cases.append(Case(file, _jest_name(case), outcome))
    return cases


def _jest_name(case: dict[str, Any]) -> str:
    """ "describe > … > title" from ancestorTitles and title (fullName joins them with spaces, so two
    tests could share it); fullName where a report has no ancestorTitles."""
    titles = case.get("ancestorTitles")
    title = case.get("title")
    if isinstance(titles, list) and isinstance(title, str):
        return " > ".join([*(str(t) for t in titles), title])
    return str(case.get("fullName") or title or "")


def _relative(file: str, roots: tuple[str, ...]) -> str:
    for root in roots:
        if root and file.startswith(root.rstrip("/") + "/"):
            return file[len(root.rstrip("/")) + 1 :]
    return file


def _tap(output: str) -> tuple[Tally | None, list[str]]:
    read = _tap_cases(output)
    if read is None:
        return None, []
    cases, results = read
    tally, ids = _tallied(cases)
    _unread_failures(output, tally, max(tally.failed + tally.errors, _counted_by_node(results)))
    return tally, ids


def _tap_cases(output: str) -> tuple[list[Case], list[TapResult]] | None:
    """node's TAP: leaf tests (a suite's own ok line follows its subtests, one level less indented), and a
    failed suite none of whose subtests failed (its own hook failed) as an error; with the result lines.
    None without node's `# tests N` summary."""
    if not any(line.startswith("# tests ") for line in output.splitlines()):
        return None
    results = _tap_results(output)
    cases = []
    for index, (_, test_id, found, _describe) in enumerate(results):
        if _is_suite(results, index):
            continue
        if found.group("directive"):
            cases.append(Case("", test_id, "skipped"))
        else:
            cases.append(Case("", test_id, "passed" if found.group("ok") == "ok" else "failed"))
    cases += [Case("", suite, "error") for suite in _failed_suites(results)]
    return cases, results


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
    read = _tape_cases(output)
    if read is None:
        return None, []
    cases, failed = read
    tally, ids = _tallied(cases)
    _unread_failures(output, tally, failed)
    return tally, ids


def _tape_cases(output: str) -> tuple[list[Case], int] | None:
    """tape's TAP: assertions grouped under the `# name` comment before them, one test per group; with
    the failed assertions counted as tape's summary counts them. None when the run did not reach its
    plan and summary."""
    lines = output.splitlines()
    plan = [i for i, line in enumerate(lines) if TAPE_PLAN.match(line.strip())]
    if not plan or not any(line.startswith("# tests ") for line in lines[plan[-1] :]):
        return None  # the run did not reach its end (a crash, a process.exit): unknown
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
    cases, seen = list[Case](), dict[str, int]()
    for name, asserts in groups:
        if not asserts:
            continue  # a test holding only subtests, or a comment
        seen[name] = seen.get(name, 0) + 1
        test_id = name if seen[name] == 1 else f"{name} ({seen[name]})"
        read = [a for a in asserts if a is not None]
        if any(a.group("ok") == "not ok" and a.group("directive") != "TODO" for a in read):
            cases.append(Case("", test_id, "failed"))
        elif all(a.group("directive") == "SKIP" for a in read):
            cases.append(Case("", test_id, "skipped"))
        else:
            cases.append(Case("", test_id, "passed"))
    # tape prints messages unescaped: a failure whose message ends "# TODO" reads as a TODO here, but
    # tape's own summary counts it as failed, and so does the check against that summary
    failures = [a for _, asserts in groups for a in asserts if a is not None and a.group("ok") == "not ok"]
    return cases, sum(1 for a in failures if a.group("directive") != "TODO")


def _checked_against_jest_summary(output: str, tally: Tally) -> None:
    """jest's --json report checked against the summary its default reporter printed (`Tests:  3 failed,
    1 passed, 4 total`, counted before any program of the repository's could touch the results): one
    failing test more when it names more failed tests than the report holds (helper-26's review case C: a
    testResultsProcessor turned each failure into a pass, the report said 3 passed, exit 0). Only ever
    adds failures: a test printing a `Tests:` line with fewer makes no failure a pass."""
    missing = max([0, *(int(n) for n in JEST_SUMMARY_FAIL.findall(ANSI.sub("", output)))]) - tally.failed
    if missing > 0:
        tally.failed += 1
        tally.failing.append(
            f"<{missing} failure(s) jest printed that its report did not hold, run {token_hex(4)}>"
        )


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
