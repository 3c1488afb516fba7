"""Test results with ids from each runner's report: real node output, and the report shapes jest, vitest
and mocha write (samples in their documented formats: those runners are not installed here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm.test_results import read_results

NODE_SUITE = """const test = require("node:test"); const assert = require("assert");
test("adds", () => assert.equal(1 + 1, 2));
test("fails", () => assert.equal(1, 2));
test.describe("group", () => { test.it("inner ok", () => {}); test.it.skip("skipped", () => {}); });
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_junit_and_tap_agree(tmp_path: Path) -> None:
    (tmp_path / "a.test.js").write_text(NODE_SUITE)
    junit = tmp_path / "junit.xml"
    argv = ["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={junit}"]
    argv += ["--test-reporter=tap", "--test-reporter-destination=stdout", "a.test.js"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    from_junit = read_results("node-test", junit, "")
    from_tap = read_results("node-test", None, done.stdout)
    assert from_junit == from_tap
    tally, ids = from_junit
    assert ids == ["adds", "fails", "group > inner ok", "group > skipped"]
    assert tally is not None and (tally.passed, tally.failed, tally.skipped) == (2, 1, 1)
    assert tally.failing == ["fails"]


def test_jest_json(tmp_path: Path) -> None:
    report = {
        "numTotalTests": 3,
        "testResults": [
            {
                "name": "/repo/test/a.test.js",
                "status": "failed",
                "assertionResults": [
                    {"fullName": "client fetches", "title": "fetches", "status": "passed"},
                    {"fullName": "client fails", "title": "fails", "status": "failed"},
                    {"fullName": "client later", "title": "later", "status": "pending"},
                ],
            },
            {"name": "/repo/test/broken.test.js", "status": "failed", "assertionResults": []},
        ],
    }
    (tmp_path / "r.json").write_text(json.dumps(report))
    tally, ids = read_results("jest", tmp_path / "r.json", "")
    assert tally is not None and (tally.passed, tally.failed, tally.errors, tally.skipped) == (1, 1, 1, 1)
    assert tally.failing == ["/repo/test/a.test.js > client fails", "/repo/test/broken.test.js"]
    assert ids[0] == "/repo/test/a.test.js > client fetches"


def test_vitest_junit(tmp_path: Path) -> None:
    (tmp_path / "j.xml").write_text(
        '<?xml version="1.0"?><testsuites name="vitest tests" tests="2" failures="1">'
        '<testsuite name="test/a.test.ts" tests="2" failures="1">'
        '<testcase classname="test/a.test.ts" name="math &gt; adds"/>'
        '<testcase classname="test/a.test.ts" name="math &gt; fails"><failure message="x"/></testcase>'
        "</testsuite></testsuites>"
    )
    tally, ids = read_results("vitest", tmp_path / "j.xml", "")
    assert ids == ["test/a.test.ts > math > adds", "test/a.test.ts > math > fails"]
    assert tally is not None and tally.failing == ["test/a.test.ts > math > fails"]


def test_mocha_xunit(tmp_path: Path) -> None:
    (tmp_path / "x.xml").write_text(
        '<testsuite name="Mocha Tests" tests="3" failures="1" errors="1" skipped="1">'
        '<testcase classname="client" name="client fetches" time="0"/>'
        '<testcase classname="client" name="client fails" time="0"><failure>boom</failure></testcase>'
        '<testcase classname="client" name="client later" time="0"><skipped/></testcase>'
        "</testsuite>"
    )
    tally, ids = read_results("mocha", tmp_path / "x.xml", "")
    assert ids[0] == "Mocha Tests > client fetches"
    assert tally is not None and (tally.passed, tally.failed, tally.skipped) == (1, 1, 1)


@pytest.mark.parametrize("runner", ["node-test", "jest", "vitest", "mocha"])
def test_no_readable_report_is_no_result(tmp_path: Path, runner: str) -> None:
    (tmp_path / "bad").write_text("<testsuites><testcase")
    assert read_results(runner, tmp_path / "bad", "ok 1 - looks like tap but no summary") == (None, [])
    assert read_results(runner, tmp_path / "missing", "") == (None, [])


def test_a_report_the_tests_left_as_a_link_or_a_fifo_is_not_read(tmp_path: Path) -> None:
    report = {"testResults": [{"name": "t", "assertionResults": [{"fullName": "a", "status": "passed"}]}]}
    host = tmp_path / "host.json"  # a host file the link points at (the tests wrote the reports folder)
    host.write_text(json.dumps(report))
    (tmp_path / "r.json").symlink_to(host)
    assert read_results("jest", tmp_path / "r.json", "") == (None, [])
    os.mkfifo(tmp_path / "fifo.json")  # a plain read would wait for a writer forever
    assert read_results("jest", tmp_path / "fifo.json", "") == (None, [])
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)  # json.loads: RecursionError
    assert read_results("jest", tmp_path / "deep.json", "") == (None, [])


def test_a_jest_suite_that_failed_to_run_beside_passing_tests_is_an_error(tmp_path: Path) -> None:
    """jest's report for a failing afterAll hook ("Test suite failed to run"): the suite's status is
    "failed", every assertion in it passed. jest exits 1 for it; the tally read it as green."""
    report = {
        "success": False,
        "numFailedTestSuites": 1,
        "numFailedTests": 0,
        "numRuntimeErrorTestSuites": 0,
        "testResults": [
            {
                "name": "/repo/test/db.test.js",
                "status": "failed",
                "message": "  ● Test suite failed to run\n\n    connection still open\n",
                "assertionResults": [
                    {"fullName": "db connects", "title": "connects", "status": "passed"},
                    {"fullName": "db queries", "title": "queries", "status": "passed"},
                ],
            },
            {
                "name": "/repo/test/ok.test.js",
                "status": "passed",
                "assertionResults": [{"fullName": "ok", "title": "ok", "status": "passed"}],
            },
        ],
    }
    (tmp_path / "r.json").write_text(json.dumps(report))
    tally, ids = read_results("jest", tmp_path / "r.json", "")
    assert tally is not None and (tally.passed, tally.failed, tally.errors) == (3, 0, 1)
    assert tally.failing == ["/repo/test/db.test.js"]
    assert ids == [
        "/repo/test/db.test.js",
        "/repo/test/db.test.js > db connects",
        "/repo/test/db.test.js > db queries",
        "/repo/test/ok.test.js > ok",
    ]


SUITE_HOOK = """const { describe, it, after } = require("node:test");
describe("db", () => {
  after(() => { throw new Error("connection still open"); });
  it("connects", () => {});
});
"""
CANARY = 'require("node:test")("canary", () => { throw new Error("must fail"); });\n'


def node_run(folder: Path, files: dict[str, str]) -> tuple[Path, str]:
    """node --test run as the tool runs it (JUnit to a file, TAP on stdout): the report and the output."""
    for name, text in files.items():
        (folder / name).write_text(text)
    junit = folder / "junit.xml"
    argv = ["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={junit}"]
    argv += ["--test-reporter=tap", "--test-reporter-destination=stdout", *files]
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=60, check=False)
    return junit, done.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_failing_suite_hook_node_leaves_out_of_its_junit_report_is_an_error(tmp_path: Path) -> None:
    """`after` inside `describe` throws: node's JUnit report holds no failure (the suite's tests passed),
    its TAP says `not ok - db` (failureType hookFailed). Read from the report alone, the canary was the only
    failure: green."""
    junit, output = node_run(tmp_path, {"a.test.js": SUITE_HOOK, "canary.test.js": CANARY})
    assert "hookFailed" in output
    for report in (junit, None):  # the JUnit report checked against the TAP, and the TAP alone
        tally, ids = read_results("node-test", report, output)
        assert tally is not None and (tally.passed, tally.failed, tally.errors) == (1, 1, 1), report
        assert tally.failing == ["canary", "db"] and "db > connects" in ids


JUNIT_CANARY_ONLY = (
    '<testsuites><testcase name="passes" classname="test"/>'
    '<testcase name="canary" classname="test"><failure message="must fail"/></testcase></testsuites>'
)


@pytest.mark.parametrize(
    "output",
    [
        # node names a failure the report does not hold (a root-level hook: "not ok - session")
        "ok 1 - passes\nnot ok 2 - session\n  ---\n  failureType: 'hookFailed'\n  ...\n"
        "not ok 3 - canary\n1..3\n# tests 2\n# fail 1\n",
        # node's own summary counts one failure more than the report and the (cut) TAP show
        "[... 4000 bytes cut ...]\nnot ok 3 - canary\n1..3\n# tests 3\n# pass 1\n# fail 2\n",
        # a test printing a summary of its own after node's cannot lower it
        "ok 1 - passes\nnot ok 2 - canary\n1..2\n# tests 3\n# fail 2\n# fail 0\n",
    ],
    ids=["unreported-line", "summary", "printed-summary"],
)
def test_node_failures_beyond_its_junit_report_are_never_green(tmp_path: Path, output: str) -> None:
    (tmp_path / "junit.xml").write_text(JUNIT_CANARY_ONLY)
    tally, _ = read_results("node-test", tmp_path / "junit.xml", output)
    assert tally is not None and tally.failed == 2, tally
    assert tally.failing[0] == "canary"
    assert tally.failing[1].startswith("<1 failure(s) not read from the output, run "), tally.failing


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_clean_node_run_gains_no_failure_from_the_check(tmp_path: Path) -> None:
    """The other side of the check: subtests, skips, todos, a failing parent test and a `# fail 0`
    a test prints add nothing the report did not say."""
    suite = NODE_SUITE + (
        'test("parent", async (t) => { await t.test("child", () => { throw new Error("x"); }); });\n'
        'test("prints", () => { console.log("# fail 0"); console.log("ok 99 - fake"); });\n'
        'test.describe("alpha", () => { test.it("one", () => {}); });\n'
    )
    junit, output = node_run(tmp_path, {"a.test.js": suite, "canary.test.js": CANARY})
    tally, ids = read_results("node-test", junit, output)
    assert tally is not None and tally.failing == ["fails", "parent > child", "canary"], tally
    assert read_results("node-test", None, output) == (tally, ids)


def test_node_tap_ids_name_the_suite_each_test_ran_in() -> None:
    """Read from the TAP alone, every test took the last suite's name ("beta > one")."""
    output = (
        "# Subtest: alpha\n    # Subtest: one\n    ok 1 - one\n    1..1\nok 1 - alpha\n"
        "# Subtest: beta\n    # Subtest: two\n    ok 1 - two\n    1..1\nok 2 - beta\n"
        "1..2\n# tests 2\n# fail 0\n"
    )
    assert read_results("node-test", None, output)[1] == ["alpha > one", "beta > two"]


def jest_report(folder: Path, major: int, root: str = "/codemod/repo", token: str = "c0ffee12345") -> Path:
    """jest --json as jest 29 writes it for the hostile review's app (orders and reports tests run under
    `major < 2 ? test : test.skip`, the 2.x tests under `major >= 2`), with the canary's file."""

    def case(titles: list[str], title: str, status: str) -> dict[str, object]:
        full = " ".join([*titles, title])
        return {"ancestorTitles": titles, "title": title, "fullName": full, "status": status}

    v1, v2 = ("passed", "pending") if major < 2 else ("pending", "passed")
    report = {
        "numPassedTests": 3,
        "numPendingTests": 2,
        "testResults": [
            {
                "name": f"{root}/test/orders.test.js",
                "status": "focused",
                "assertionResults": [
                    case(["orders"], "loads an order by id", v1),
                    case(["orders"], "the 2.x client loads an order", v2),
                ],
            },
            {
                "name": f"{root}/test/reports.test.js",
                "status": "passed",
                "assertionResults": [
                    case(["reports"], "runs a named operation", v1),
                    case(["reports"], "the 2.x client runs a named operation", v2),
                    case(["reports", "later"], "a todo", "todo"),
                    case(["reports"], "off", "disabled"),
                ],
            },
            {
                "name": f"{root}/test/{token}.test.js",
                "status": "failed",
                "assertionResults": [case([], token, "failed")],
            },
        ],
    }
    path = folder / f"jest-{major}.json"
    path.write_text(json.dumps(report))
    return path


def kept_statuses(document: object, folder: Path, name: str) -> dict[str, str]:
    """The document as verify keeps it (reports/junit-<phase>.xml), read as the test_ids gate reads it."""
    import xml.etree.ElementTree as ET

    from agentic_codemod.tools.junit import case_statuses

    assert isinstance(document, ET.Element)
    ET.ElementTree(document).write(folder / name, encoding="utf-8", xml_declaration=True)
    statuses = case_statuses(folder / name)
    assert statuses is not None
    return statuses


def test_jests_json_report_gives_the_id_gate_each_tests_outcome(tmp_path: Path) -> None:
    """The hostile review's jest app: the app's tests ran at baseline (1.x) and were skipped on 2.0.0,
    while the 2.x tests ran instead (3 passed, 2 skipped in both phases). jest's --json report, kept as
    junit-<phase>.xml, was no XML: the gate had no ids and passed, exit 0. Read as JUnit, both of the
    app's tests are lost; the canary (its own file) is not in the document."""
    from agentic_codemod.adapters.npm.test_results import case_report
    from agentic_codemod.tools.junit import lost_passes

    roots = ("/codemod/repo",)
    before = kept_statuses(
        case_report("jest", jest_report(tmp_path, 1), "", "c0ffee12345", roots), tmp_path, "b"
    )
    after = kept_statuses(
        case_report("jest", jest_report(tmp_path, 2), "", "c0ffee12345", roots), tmp_path, "a"
    )
    assert before == {
        "test/orders.test.js::orders > loads an order by id": "passed",
        "test/orders.test.js::orders > the 2.x client loads an order": "skipped",
        "test/reports.test.js::reports > runs a named operation": "passed",
        "test/reports.test.js::reports > the 2.x client runs a named operation": "skipped",
        "test/reports.test.js::reports > later > a todo": "skipped",
        "test/reports.test.js::reports > off": "skipped",
    }
    assert lost_passes(before, after)[0] == [
        ("test/orders.test.js::orders > loads an order by id", "skipped"),
        ("test/reports.test.js::reports > runs a named operation", "skipped"),
    ]


def test_jest_ids_name_the_file_in_the_copy_and_the_describe_titles(tmp_path: Path) -> None:
    """jest names each file by its absolute path: under process isolation the baseline's copy and the
    candidate's are two folders, so every id differed between them (every test read as lost, every
    failure as new). Ids are relative to the copy, and join the describe titles with " > " (fullName
    joins them with spaces: describe("a b") test("c") and describe("a") test("b c") were one id)."""
    from agentic_codemod.adapters.npm.test_facts import TEST_FACTS
    from agentic_codemod.adapters.types import TestCommand

    command = TestCommand(argv=["jest"], source="package.json scripts.test", runner="jest")
    copies = {"b": tmp_path / "baseline-copy", "a": tmp_path / "copy"}
    read = {
        k: TEST_FACTS.read_results(command, copy, jest_report(tmp_path, 1, root=str(copy)), "")
        for k, copy in copies.items()
    }
    assert read["b"] == read["a"]
    tally, ids = read["a"]
    assert ids[0] == "test/orders.test.js > orders > loads an order by id"
    assert tally is not None and tally.failing == ["test/c0ffee12345.test.js > c0ffee12345"]
    assert TEST_FACTS.case_report is not None and TEST_FACTS.reports_each_test is not None
    document = TEST_FACTS.case_report(
        command, copies["a"], jest_report(tmp_path, 1, str(copies["a"])), "", "c0ffee12345"
    )
    assert "test/orders.test.js::orders > loads an order by id" in kept_statuses(document, tmp_path, "k.xml")
    assert TEST_FACTS.reports_each_test(command)


def test_a_jest_file_that_failed_to_run_is_an_error_in_the_kept_report(tmp_path: Path) -> None:
    from agentic_codemod.adapters.npm.test_results import case_report

    report = {"testResults": [{"name": "/r/test/db.test.js", "status": "failed", "assertionResults": []}]}
    (tmp_path / "r.json").write_text(json.dumps(report))
    document = case_report("jest", tmp_path / "r.json", "", "c0ffee12345", ("/r",))
    assert kept_statuses(document, tmp_path, "k.xml") == {"test/db.test.js::test/db.test.js": "failed"}
    assert case_report("jest", tmp_path / "missing.json", "", "c0ffee12345") is None  # unread: no document


TAPE_RUN = """TAP version 13
# adds
ok 1 should be equal
# SKIP later
# c0ffee12345
not ok 2 c0ffee12345
# title with \x1b[31m an escape
ok 3 fine

1..3
# tests 3
# pass  2
# fail  1
"""


def test_tap_runs_give_the_id_gate_each_tests_outcome(tmp_path: Path) -> None:
    """tape writes no report, and node's TAP stands in for a JUnit report node did not write: the gate had
    no ids for either (nothing kept as junit-<phase>.xml) and compared nothing. The TAP as read is kept
    as JUnit, the canary left out; a title with a control character keeps the document readable. Where
    node wrote its JUnit report, that report is the one kept (no document)."""
    from agentic_codemod.adapters.npm.test_results import case_report

    statuses = kept_statuses(case_report("tape", None, TAPE_RUN, "c0ffee12345"), tmp_path, "tape.xml")
    assert statuses == {
        "::adds": "passed",
        "::later": "skipped",
        "::title with \ufffd[31m an escape": "passed",
    }
    node_tap = "ok 1 - adds\nnot ok 2 - c0ffee12345\nok 3 - later # SKIP\n1..3\n# tests 3\n# fail 1\n"
    statuses = kept_statuses(case_report("node-test", None, node_tap, "c0ffee12345"), tmp_path, "node.xml")
    assert statuses == {"::adds": "passed", "::later": "skipped"}
    (tmp_path / "junit.xml").write_text(JUNIT_CANARY_ONLY)
    assert case_report("node-test", tmp_path / "junit.xml", node_tap, "canary") is None
    for runner in ("vitest", "mocha"):
        assert case_report(runner, tmp_path / "junit.xml", "", "canary") is None
    assert case_report("tape", None, "ok 1 cut before the plan\n", "c0ffee12345") is None
