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
