"""LlmBrain's fail-closed rules, one step at a time against the mock (full runs: test_llm_path.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
from mock_llm import MockLLM
from run_state import ROOT, make_state

from agentic_codemod.apm import AgentSpec
from agentic_codemod.errors import CandidateRejected, EnvironmentUnavailable
from agentic_codemod.llm.agent_replies import silent_failure, structured_reply
from agentic_codemod.llm.brain import LlmBrain
from agentic_codemod.llm.factory import load_models
from agentic_codemod.models import Candidate, ChangePlan, Finding, Tally, VerificationResult
from agentic_codemod.workflow.state import RunState, need

FIXED = '--- a/src/reports.py\n+++ b/src/reports.py\n-    "load": "fetch",\n+    "load": "get",\n'


def spec(name: str, step: str, tools: list[str]) -> AgentSpec:
    return AgentSpec(
        name=name,
        description=f"the {name}",
        step=step,
        model_role=name,
        tools=tools,
        output="ReviewVerdict" if step == "review" else "none",
        instructions=f"You are the {name}.",
        package="test",
        source=Path(f"{name}.agent.md"),
        included=[],
    )


def reviewed_state(tmp_path: Path, patch: str = FIXED) -> RunState:
    state = make_state(tmp_path)
    context = SimpleNamespace(agent_for_step=lambda step: spec("reviewer", "review", ["read", "diff"]))
    state.setup = dataclasses.replace(need(state.setup), context=context)
    state.paths.artifact("changes.patch").write_text(patch)
    state.candidate = Candidate(
        base_commit="b" * 40, sha256="c" * 64, files=["src/reports.py"], bytes=len(patch)
    )
    state.verifications.append(
        VerificationResult(
            phase="iteration-1",
            command=["python", "-m", "pytest"],
            exit_code=0,
            duration_s=1.0,
            passed=True,
            output_tail="17 passed",
            tests=Tally(passed=17),
        )
    )
    return state


def brain(mock: MockLLM) -> LlmBrain:
    return LlmBrain(models=load_models(ROOT, environ={"CODEMOD_LLM_BASE_URL": mock.url}))


def test_a_structured_reply_is_validated_and_a_fenced_one_accepted() -> None:
    text = '```json\n{"task_id": "t", "sdk": "acme-sdk", "target_version": "2.1.0"}\n```'
    assert structured_reply(text, ChangePlan, "planner").target_version == "2.1.0"
    with pytest.raises(CandidateRejected, match="field 'task_id': Field required"):
        structured_reply('{"sdk": "acme-sdk"}', ChangePlan, "planner")


def test_a_tool_call_written_as_text_names_the_tool_parser() -> None:
    with pytest.raises(CandidateRejected, match="tool call written as text") as caught:
        structured_reply(
            '<tool_call>\n{"name": "read_file", "arguments": {}}\n</tool_call>', ChangePlan, "planner"
        )
    assert "--tool-call-parser hermes" in str(caught.value)
    bare = silent_failure("coder", 0, '{"name": "replace_in_file", "arguments": {"path": "a"}}')
    assert "as text" in str(bare) and "--enable-auto-tool-choice" in str(bare)


def test_a_coder_that_changes_nothing_fails_with_the_likely_cause() -> None:
    assert "made no tool call at all" in str(silent_failure("coder", 0, "Done."))
    assert "tool parser" not in str(silent_failure("coder", 3, "All good.")).lower()
    assert "after 3 tool call(s) without changing a file" in str(silent_failure("coder", 3, "All good."))


def test_the_reviewer_sees_only_criteria_patch_and_evidence(mock_llm: MockLLM, tmp_path: Path) -> None:
    state = reviewed_state(tmp_path)
    criteria = [*state.task.acceptance_criteria, "PLANNER-DERIVED-CHECK"]
    state.plan = ChangePlan(
        task_id="t",
        sdk="acme-sdk",
        target_version="2.1.0",
        steps=["CODER-PLAN-STEP"],
        acceptance_criteria=criteria,
    )
    verdict = brain(mock_llm).review(state, [])
    assert verdict.verdict == "approve" and verdict.reviewer == "reviewer"
    request = mock_llm.log()[-1]
    assert request["roles"] == ["system", "user"]  # no conversation but its own
    assert state.task.acceptance_criteria[0] in request["user"] and "PLANNER-DERIVED-CHECK" in request["user"]
    assert '+    "load": "get",' in request["user"]
    assert "17 passed" in request["user"] and "CODER-PLAN-STEP" not in request["user"]
    assert state.manifest.models == {"reviewer": load_models(ROOT, environ={}).role("reviewer").model}


def test_a_gate_error_forces_reject_whatever_the_reviewer_says(mock_llm: MockLLM, tmp_path: Path) -> None:
    finding = Finding(
        severity="error", message="scope: tests/test_reports.py changed", path="tests/test_reports.py"
    )
    verdict = brain(mock_llm).review(reviewed_state(tmp_path), [finding])
    assert verdict.verdict == "reject"
    assert verdict.findings[0] == finding and "approve" in verdict.summary


def test_an_approval_listing_its_own_errors_is_not_an_approval(mock_llm: MockLLM, tmp_path: Path) -> None:
    mock_llm.fault("review-approve-with-errors")
    verdict = brain(mock_llm).review(reviewed_state(tmp_path), [])
    assert verdict.verdict == "unsure" and "approve with error findings" in verdict.summary
    assert any(f.severity == "error" for f in verdict.findings)


def test_an_unusable_review_is_unsure_not_approve(mock_llm: MockLLM, tmp_path: Path) -> None:
    mock_llm.fault("schema-invalid")
    verdict = brain(mock_llm).review(reviewed_state(tmp_path), [])
    assert verdict.verdict == "unsure" and "does not fit ReviewVerdict" in verdict.summary


def test_a_review_the_endpoint_cannot_give_pauses_the_run(mock_llm: MockLLM, tmp_path: Path) -> None:
    mock_llm.fault("http-500")
    state = reviewed_state(tmp_path)
    with pytest.raises(EnvironmentUnavailable):
        brain(mock_llm).review(state, [])
    assert state.verdict is not None and state.verdict.verdict == "unsure"
    assert state.manifest.tokens is not None and state.manifest.tokens["total"]["prompt_tokens"] is None


def test_a_patch_too_big_to_show_whole_is_not_reviewed(mock_llm: MockLLM, tmp_path: Path) -> None:
    state = reviewed_state(tmp_path, patch=FIXED + "+# filler\n" * 8_000)
    verdict = brain(mock_llm).review(state, [])
    assert verdict.verdict == "unsure" and "exceeds max_input_chars" in verdict.summary
    assert mock_llm.log() == []
