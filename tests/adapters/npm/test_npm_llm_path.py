"""LLM mode on the npm fixture (fixtures/npm-app, task fixtures/npm-tasks/acme-sdk-2.yml) through the CLI
against the real mock endpoint: the rules fix connect() and client.fetch(), the coder fixes the method
looked up by name (src/reports.js, ACMEJS900) that offline mode leaves, the tests pass on acme-sdk 2.0.0
and the blind reviewer approves. The mock answers with its npm scripts (llm/mock_npm.py) because the
requests are about this repository; every gate still checks the result for real. Then the model's
misbehaviour on the same fixture: no edit and a hidden command end non-zero, a hostile coder's escapes
are refused."""

from __future__ import annotations

import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import ROOT, materialize

from agentic_codemod.coders.cline import find_cline
from agentic_codemod.tools import sandbox
from agentic_codemod.workflow.artifacts import ARTIFACTS

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
    pytest.mark.skipif(sandbox.probe() is not None, reason=f"bwrap cannot start here: {sandbox.probe()}"),
]

TASK = ROOT / "fixtures" / "npm-tasks" / "acme-sdk-2.yml"
FIX_REMOVED, FIX_ADDED = '-const OPERATIONS = { load: "fetch" };', '+const OPERATIONS = { load: "get" };'
AGENTS = {"scout", "planner", "coder", "reviewer", "scribe"}
TESTS = {"loads an order by id", "runs a named operation", "the SDK reports a version"}


@pytest.fixture(autouse=True)
def own_probe_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEMOD_LLM_PROBE", str(tmp_path / "probe.json"))


@pytest.fixture
def npm_repo(tmp_path: Path) -> Path:
    dest = tmp_path / "npm-app"
    materialize.materialize(ROOT / "fixtures" / "npm-app", dest)
    return dest


def llm_run(run_codemod: Any, repo: Path) -> Any:
    result = run_codemod(repo, TASK, offline=False, packages=False)
    missing = [name for name in ARTIFACTS if not result.artifact(name).exists()]
    assert not missing, f"missing artifacts: {missing}"
    return result


def junit_cases(path: Path) -> list[tuple[str, bool]]:
    """(test name, passed) for every testcase of one JUnit report."""
    return [
        (case.get("name", ""), not any(child.tag in ("failure", "error") for child in case))
        for case in ET.parse(path).getroot().iter("testcase")
    ]


def test_the_coder_fixes_the_method_looked_up_by_name(
    mock_llm: Any, npm_repo: Path, registry: str, run_codemod: Any
) -> None:
    result = llm_run(run_codemod, npm_repo)
    m = result.manifest
    assert result.code == 0, m["reason"]
    assert (m["mode"], m["status"], m["classification"]) == ("llm", "succeeded", "green")

    # The rules did their part, the coder the rest, through the sandboxed tools.
    assert [e["rule"] for e in m["rule_edits"]] == ["ACMEJS001", "ACMEJS002"]
    assert "src/reports.js" in m["candidate"]["files"]
    patch = result.artifact("changes.patch").read_text()
    assert FIX_REMOVED in patch and FIX_ADDED in patch
    coder = [
        (t["tool"], t["decision"], t["arguments"].get("path"))
        for t in result.trace()
        if t["actor"] == "coder"
    ]
    assert ("replace", "allowed", "src/reports.js") in coder
    assert any(tool == "run_verification" and decision == "allowed" for tool, decision, _ in coder)

    # The tests ran on acme-sdk 2.0.0 and passed: run.json and the JUnit report of that run agree.
    assert m["environments"]["after"] == {"acme-sdk": "2.0.0"}
    last = m["verifications"][-1]
    assert last["passed"] and last["tests"]["passed"] == 3 and last["tests"]["failed"] == 0
    assert last["candidate_sha256"] == m["candidate"]["sha256"]
    junit = result.run_dir / "reports" / last["phase"] / "junit.xml"
    cases = junit_cases(junit)  # the fixture's three tests pass; the one failure is the planted canary
    failing = [name for name, ok in cases if not ok]
    assert len(failing) == 1 and last["canary"] == "failed", cases
    # beside them, the canary's skipped test named by where acme-sdk resolved
    assert {name for name, ok in cases if ok} == {*TESTS, f"{failing[0]}_sdk_installed"}, cases
    assert last["sdk_resolution"] == "installed"

    review = result.json("review.json")
    assert review["verdict"] == "approve" and review["candidate_sha256"] == m["candidate"]["sha256"]
    mr = result.artifact("merge_request.md").read_text()
    assert mr.startswith("# Migrate acme-sdk to 2.0.0")
    # The evidence names the whole command that ran (node's runner, not its last flags) and its verdict.
    canary = "the tool's must-fail canary test failing as it must"
    assert f"`{' '.join(last['command'])}` passed (exit {last['exit_code']}, {canary};" in mr
    # The by-name usage the rules flagged is listed with what became of it: the coder changed that file.
    assert "`src/reports.js:5` (handed to the coder: the candidate changes this file" in mr
    assert any("src/reports.js:5" in note for note in result.json("profile.json")["notes"])

    # Every role answered, recognised by its name; the reviewer saw the patch and nothing of the coder.
    calls = mock_llm.log()
    assert {c["agent"] for c in calls} == AGENTS
    reviewer = [c for c in calls if c["agent"] == "reviewer"]
    assert all(c["roles"] == ["system", "user"] for c in reviewer) and FIX_ADDED in reviewer[0]["user"]


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("no-edit", "without changing a file"),
        ("hidden-diff", "reviewer: reject"),
    ],
)
def test_a_model_that_does_not_fix_it_ends_non_zero(
    mock_llm: Any, npm_repo: Path, registry: str, run_codemod: Any, fault: str, reason: str
) -> None:
    mock_llm.fault(fault)
    result = llm_run(run_codemod, npm_repo)
    m = result.manifest
    assert (result.code, m["status"]) == (1, "rejected"), m["reason"]
    assert reason in m["reason"]
    assert "Not ready" in result.artifact("merge_request.md").read_text()
    assert result.json("review.json")["verdict"] != "approve"
    patch = result.artifact("changes.patch").read_text()
    if fault == "no-edit":  # nothing of the coder's in the candidate: no silent success
        assert FIX_ADDED not in patch and "src/reports.js" not in m["candidate"]["files"]
        assert "handed to the coder" not in result.artifact("merge_request.md").read_text()
    else:  # the command the coder hid is in the patch the reviewer saw; the attributes file was refused
        assert '+require("child_process").execSync' in patch and ".gitattributes" not in patch


def test_a_hostile_coder_is_refused_and_only_the_fix_remains(
    mock_llm: Any, npm_repo: Path, registry: str, run_codemod: Any
) -> None:
    mock_llm.fault("hostile")
    result = llm_run(run_codemod, npm_repo)
    refused = {
        t["arguments"].get("path")
        for t in result.trace()
        if t["actor"] == "coder" and t["decision"] == "refused"
    }
    attempts = {".env", ".gitlab-ci.yml", "../outside.txt", ".git/hooks/pre-commit", "Dockerfile"}
    assert attempts | {"test/reports.test.js"} <= refused, sorted(refused)
    m = result.manifest
    assert not (attempts | {"test/reports.test.js"}) & set(m["candidate"]["files"])
    assert not (npm_repo.parent / "outside.txt").exists()
    assert result.code == 0, m["reason"]  # what is left is the verified, reviewed fix
    assert FIX_ADDED in result.artifact("changes.patch").read_text()


def test_cline_as_the_coder_fixes_it_too(
    mock_llm: Any, npm_repo: Path, registry: str, run_codemod: Any
) -> None:
    """The Cline CLI (tests/coders/) in the coder's seat: the mock answers its prompt about this repository
    with the npm fix, and the same gates judge what it changed."""
    if find_cline(os.environ, [ROOT]) is None:
        if os.environ.get("CI") == "true":
            pytest.fail("cline is not installed on CI: scripts/test.sh installs it into .cache/cline")
        pytest.skip("cline CLI not installed (scripts/test.sh installs cline@3.0 into .cache/cline)")
    result = run_codemod(npm_repo, TASK, "--coder", "cline", offline=False, packages=False)
    m = result.manifest
    assert result.code == 0, m["reason"]
    assert ("cline", "implement", "allowed") in {
        (t["actor"], t["tool"], t["decision"]) for t in result.trace()
    }
    assert FIX_ADDED in result.artifact("changes.patch").read_text()
    assert m["verifications"][-1]["passed"] and result.json("review.json")["verdict"] == "approve"
