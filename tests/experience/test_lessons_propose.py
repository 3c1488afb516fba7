"""A run proposes lessons only from a real failure or review finding; otherwise an explicit NO_ENTRY."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures_support import ACME_APP, RULES_DIR, materialize
from lessons_support import RUN_ID, finish

import agentic_codemod.experience.proposals as propose_module
from agentic_codemod.experience import PROPOSED, Lesson, NoEntry, propose, validate, write_proposals
from agentic_codemod.models import Finding, ReviewVerdict, Tally, VerificationResult
from agentic_codemod.workflow import codemod
from agentic_codemod.workflow.brains import mechanical_review

RED_TAIL = """\
    def _call(self, operation: str, *args: Any) -> Any:
>       method = getattr(self._client, OPERATIONS[operation])
E       AttributeError: 'Client' object has no attribute 'fetch'

src/acme_app/reports.py:19: AttributeError
FAILED tests/test_reports.py::test_daily_summary_totals_the_day - AttributeEr...
"""


def verification(phase: str, passed: bool, tail: str = "", failing: list[str] | None = None):
    failing = failing or []
    counts = Tally(passed=15 if failing else 17, failed=len(failing), failing=failing)
    return VerificationResult(
        phase=phase,
        command=["pytest"],
        exit_code=0 if passed else 1,
        duration_s=0.1,
        passed=passed,
        output_tail=tail,
        tests=counts,
    )


@pytest.fixture
def red_state(make_state, tmp_path: Path):
    """acme-app after the rules on 2.1.0: ACME900 still matches reports.py, the tests it reaches fail."""
    state = make_state()
    materialize.materialize(ACME_APP, state.paths.worktree)
    state.rules = codemod.load_rules(RULES_DIR)
    state.verifications = [
        verification("baseline", True),
        verification(
            "iteration-1", False, RED_TAIL, ["tests.test_reports::test_daily_summary_totals_the_day"]
        ),
    ]
    state.manifest.classification = "introduced"
    state.manifest.reason = "1 usage(s) the rules cannot migrate: ACME900 src/acme_app/reports.py:19"
    return state


def test_a_detect_only_match_left_red_gives_a_lesson_about_that_construct(red_state) -> None:
    lessons = propose(red_state)

    assert isinstance(lessons, list) and len(lessons) == 1
    lesson = lessons[0]
    assert lesson.id == f"ACME900@{RUN_ID}" and lesson.source_run == RUN_ID
    assert lesson.cue.model_dump() == {
        "ecosystem": "python",
        "sdk": "acme-sdk",
        "construct": "ACME900",
        "target": ">=2.1.0",
    }
    assert "src/acme_app/reports.py:19" in lesson.lesson
    assert "'Client' object has no attribute 'fetch'" in lesson.lesson
    assert lesson.confidence == "medium" and "names the file" in lesson.confidence_reason
    assert "below 2.1.0" in lesson.counter_example
    assert lesson.evidence.paths == [
        "run.json#/verifications/1",
        "plan.json#/requires_human/0",
        "changes.patch",
    ]


def test_proposals_are_written_after_run_json_and_pass_the_validator(red_state) -> None:
    finish(red_state)
    path = write_proposals(red_state)

    assert path == red_state.paths.artifact(PROPOSED)
    assert validate(path) == []
    [line] = path.read_text().splitlines()
    assert Lesson.model_validate_json(line).cue.construct_ == "ACME900"
    assert json.loads(line)["cue"]["construct"] == "ACME900"


def test_a_proposal_whose_evidence_is_missing_becomes_no_entry(red_state) -> None:
    path = write_proposals(red_state)  # run.json was never written: the evidence does not exist
    record = json.loads(path.read_text())
    assert list(record) == ["NO_ENTRY"] and "rejected by the validator" in record["NO_ENTRY"]


def test_a_clean_success_is_no_entry(make_state) -> None:
    state = make_state(status="succeeded", verifications=[verification("iteration-1", True)])
    result = propose(state)
    assert isinstance(result, NoEntry) and "clean success" in result.reason
    finish(state)
    path = write_proposals(state)
    assert json.loads(path.read_text()) == {"NO_ENTRY": "status succeeded: a clean success: nothing failed"}
    assert validate(path) == []


@pytest.mark.parametrize("status", ["nothing_to_do", "paused", "cancelled", "bad_input", "failed"])
def test_runs_without_a_code_failure_are_no_entry(make_state, status: str) -> None:
    assert isinstance(propose(make_state(status=status)), NoEntry)


def test_pre_existing_failures_teach_nothing(red_state) -> None:
    red_state.manifest.classification = "pre-existing"
    assert isinstance(propose(red_state), NoEntry)


def test_green_verification_with_the_match_still_present_teaches_nothing(red_state) -> None:
    red_state.verifications.append(verification("iteration-2", True))
    red_state.manifest.classification = "green"
    assert isinstance(propose(red_state), NoEntry)


def test_a_failed_gate_gives_a_lesson(make_state) -> None:
    state = make_state(status="rejected")
    state.manifest.gates = [
        {
            "name": "scope",
            "passed": False,
            "findings": [{"message": "ci/deploy.sh is outside allowed paths"}],
        },
        {"name": "test_count", "passed": True, "findings": []},
    ]
    [lesson] = propose(state)
    assert lesson.cue.construct_ == "gate:scope" and "ci/deploy.sh" in lesson.lesson
    assert lesson.evidence.paths[0] == "run.json#/gates/0"


def test_a_reviewer_finding_gives_a_lesson_but_the_tools_own_findings_do_not(make_state) -> None:
    state = make_state(status="rejected")
    mechanical = mechanical_review(state, [], reviewer="rules")  # no candidate, no green verification
    assert [f.code for f in mechanical.findings] == ["review.candidate_empty", "review.verification_red"]
    state.verdict = mechanical
    assert isinstance(propose(state), NoEntry)
    own = [
        Finding(severity="error", message="timeout changed from 4.0 to 10.0", path="src/acme_app/clients.py"),
        Finding(severity="warning", message="style"),
        # The reviewer's own finding in the tool's words is still the reviewer's: no message text is matched.
        Finding(severity="error", message=mechanical.findings[1].message),
    ]
    findings = [*mechanical.findings, *own]
    state.verdict = ReviewVerdict(verdict="reject", reviewer="reviewer", findings=findings)
    first, second = propose(state)
    assert first.cue.construct_ == "review" and first.confidence == "low"
    assert "timeout changed" in first.lesson and first.evidence.paths[0] == "review.json#/findings/2"
    assert second.evidence.paths[0] == "review.json#/findings/4"


def test_write_proposals_never_raises(red_state, monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(state):
        raise RuntimeError("boom")

    monkeypatch.setattr(propose_module, "propose", explode)
    path = write_proposals(red_state)
    assert "could not propose lessons: RuntimeError: boom" in path.read_text()
    path.unlink()
    path.mkdir()  # the target cannot be written
    assert write_proposals(red_state) is None
