"""The reports the test_ids gate compares (reports/junit-<phase>.xml): every npm runner's tests, each with
its outcome, the canary cut wherever it sits; and a phase whose outcomes cannot be read never lets the
gate pass by comparing nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from agentic_codemod.adapters.npm import ADAPTER as NPM
from agentic_codemod.adapters.python import ADAPTER as PYTHON
from agentic_codemod.adapters.types import Adapter, TestCommand
from agentic_codemod.models import VerificationResult
from agentic_codemod.tools.junit import case_statuses
from agentic_codemod.workflow import verify
from agentic_codemod.workflow.review_gates import kept_passing_gate
from agentic_codemod.workflow.state import RunState

TOKEN = "c0ffee12345"
JEST = TestCommand(argv=["jest"], source="package.json scripts.test", runner="jest")
UNITTEST = TestCommand(argv=["python", "-m", "unittest"], source="tests/ folder", runner="unittest")


def jest_json(status: str) -> str:
    """jest --json: the app's test (passed at baseline, skipped on the target) and the canary's file."""
    return json.dumps(
        {
            "testResults": [
                {
                    "name": "/codemod/repo/test/orders.test.js",
                    "status": "passed",
                    "assertionResults": [
                        {
                            "ancestorTitles": ["orders"],
                            "title": "loads",
                            "fullName": "orders loads",
                            "status": status,
                        }
                    ],
                },
                {
                    "name": f"/codemod/repo/test/{TOKEN}.test.js",
                    "status": "failed",
                    "assertionResults": [{"ancestorTitles": [], "title": TOKEN, "status": "failed"}],
                },
            ]
        }
    )


def keep(tmp_path: Path, phase: str, command: TestCommand, report: str | None, output: str = "") -> Path:
    """What verify.run_tests keeps of a run: reports/<phase>/junit.xml (the runner's report, as {junit}
    names it: jest's JSON there) -> reports/junit-<phase>.xml."""
    (tmp_path / phase).mkdir(exist_ok=True)
    junit = tmp_path / phase / "junit.xml"
    if report is not None:
        junit.write_text(report)
    dest = tmp_path / f"junit-{phase}.xml"
    verify.keep_report(command, tmp_path / "copy", junit, output, TOKEN, dest, NPM.test_facts)
    return dest


def gate(tmp_path: Path, adapter: Adapter, command: TestCommand) -> list[str]:
    """kept_passing_gate on the reports in tmp_path: the finding codes."""

    def result(phase: str) -> VerificationResult:
        return VerificationResult(phase=phase, command=["x"], exit_code=1, duration_s=0, passed=True)

    state = SimpleNamespace(
        baseline=result("baseline"),
        last_verification=result("iteration-1"),
        paths=SimpleNamespace(reports=tmp_path),
        notes=[],
        adapter=adapter,
        test_command=command,
    )
    return [str(f.code) for f in kept_passing_gate(cast(RunState, state)).findings]


def test_a_jest_test_skipped_on_the_target_is_lost_by_id(tmp_path: Path) -> None:
    """The hostile review's run: jest's JSON was copied as no JUnit (nothing kept), the gate had no ids
    for either phase and passed: exit 0 with the app's tests skipped on 2.0.0."""
    keep(tmp_path, "baseline", JEST, jest_json("passed"))
    kept = keep(tmp_path, "iteration-1", JEST, jest_json("pending"))
    assert case_statuses(kept) == {"test/orders.test.js::orders > loads": "skipped"}  # the canary cut
    assert gate(tmp_path, NPM, JEST) == ["test_ids.lost"]


def test_a_phase_without_a_readable_report_never_passes_the_id_gate(tmp_path: Path) -> None:
    """Before, only a target without a report beside a baseline with one was a finding: a baseline
    without one (the target's tests then compared with nothing), or both without one for a runner whose
    every run gives each test's outcome (npm's; and Python's since unittest's, stestr's and trial's are
    kept as documents too), passed the gate."""
    assert gate(tmp_path, NPM, JEST) == ["test_ids.unread"]  # both unread: npm's runners always give ids
    assert gate(tmp_path, PYTHON, UNITTEST) == ["test_ids.unread"]  # so do Python's (its -v result lines)
    keep(tmp_path, "iteration-1", JEST, jest_json("passed"))
    assert gate(tmp_path, NPM, JEST) == ["test_ids.unread"]  # the baseline's unread, the target's read
    assert gate(tmp_path, PYTHON, UNITTEST) == ["test_ids.unread"]
    keep(tmp_path, "baseline", JEST, "{not json")  # a report jest left unreadable: nothing kept
    assert not (tmp_path / "junit-baseline.xml").exists()
    assert gate(tmp_path, NPM, JEST) == ["test_ids.unread"]
    keep(tmp_path, "baseline", JEST, jest_json("passed"))
    assert gate(tmp_path, NPM, JEST) == []
    (tmp_path / "junit-iteration-1.xml").unlink()
    assert gate(tmp_path, NPM, JEST) == ["test_ids.unread"]  # the target's unread: as before


NODE_APP = 'const test = require("node:test");\ntest("adds", () => {});\n'
NODE_CANARY = f'require("node:test")("{TOKEN}", () => {{ throw new Error("must fail"); }});\n'


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_nodes_top_level_canary_is_cut_from_the_kept_report(tmp_path: Path) -> None:
    """node writes a file's top-level tests straight into <testsuites>: without_canary cut the canary
    only out of a <testsuite>, so it stayed in junit-<phase>.xml, failing, in CI's test report."""
    for name, text in (("a.test.js", NODE_APP), (f"{TOKEN}.test.js", NODE_CANARY)):
        (tmp_path / name).write_text(text)
    junit = tmp_path / "junit.xml"
    argv = ["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={junit}"]
    argv += ["a.test.js", f"{TOKEN}.test.js"]
    subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert TOKEN in junit.read_text()
    verify.without_canary(junit, TOKEN, tmp_path / "kept.xml")
    statuses = case_statuses(tmp_path / "kept.xml")
    assert statuses is not None and list(statuses.values()) == ["passed"] and len(statuses) == 1
    assert TOKEN not in (tmp_path / "kept.xml").read_text()


def test_a_canary_straight_in_testsuites_is_cut_with_its_counts(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text(
        f'<testsuites tests="2" failures="1"><testcase classname="test" name="adds"/>'
        f'<testcase classname="test" name="{TOKEN}"><failure/></testcase></testsuites>'
    )
    verify.without_canary(report, TOKEN, tmp_path / "kept.xml")
    text = (tmp_path / "kept.xml").read_text()
    assert TOKEN not in text and 'tests="1" failures="0"' in text
