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
