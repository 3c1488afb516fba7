"""Structured output that fits the endpoint: json_schema, json_object or a tool call, set per role in
models.yml or chosen by the probe; the same pydantic validation for all three; tool_choice always sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from mock_llm import MockLLM
from test_llm_brain import reviewed_state
from test_llm_calls import review, runner

from agentic_codemod.errors import CandidateRejected
from agentic_codemod.llm.factory import load_models
from agentic_codemod.llm.probe import run_probe, save

EXPECTED_FORMAT = {"json_schema": "json_schema", "json_object": "json_object", "tool_call": None}


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "tool_call"])
def test_each_structured_output_validates_the_same_schema(
    mock_llm: MockLLM, tmp_path: Path, mode: str
) -> None:
    state = reviewed_state(tmp_path)
    verdict = review(runner(mock_llm, tmp_path, reviewer=f"{{structured_output: {mode}}}"), state)
    assert verdict.verdict == "reject" and verdict.findings  # the mock's verdict, parsed and validated
    sent = mock_llm.log()[-1]
    assert sent["response_format"] == EXPECTED_FORMAT[mode] and sent["tool_choice"] == "auto"
    assert ("submit_ReviewVerdict" in sent["tools"]) is (mode == "tool_call")
    assert state.manifest.llm is not None
    assert state.manifest.llm["roles"]["reviewer"] == {
        "structured_output": mode,
        "structured_output_source": "models.yml",
        "tool_choice": "auto",
        "context_tokens": None,
    }


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "tool_call"])
def test_a_reply_that_does_not_fit_fails_in_every_mode(mock_llm: MockLLM, tmp_path: Path, mode: str) -> None:
    mock_llm.fault("schema-invalid")
    with pytest.raises(CandidateRejected, match="does not fit ReviewVerdict"):
        review(
            runner(mock_llm, tmp_path, reviewer=f"{{structured_output: {mode}}}"), reviewed_state(tmp_path)
        )


def test_a_run_uses_what_the_probe_found(mock_llm: MockLLM, tmp_path: Path) -> None:
    mock_llm.behave("no-json-schema", "tools-need-choice")
    coder = load_models(
        None, environ={"CODEMOD_LLM_BASE_URL": mock_llm.url, "CODEMOD_LLM_MODEL": "mock-model"}
    ).role("coder")
    save(run_probe(coder))
    state = reviewed_state(tmp_path)
    verdict = review(runner(mock_llm, tmp_path), state)
    assert verdict.verdict == "reject"
    sent = mock_llm.log()[-1]
    assert sent["response_format"] == "json_object" and sent["tool_choice"] == "auto"
    assert state.manifest.llm is not None
    assert state.manifest.llm["roles"]["reviewer"]["structured_output_source"] == "probe"
    probe = state.manifest.llm["probe"]
    assert probe["ok"] and probe["structured_output"] == "json_object" and probe["json_schema"] is False


def test_without_a_probe_or_a_setting_it_is_json_schema(mock_llm: MockLLM, tmp_path: Path) -> None:
    state = reviewed_state(tmp_path)
    review(runner(mock_llm, tmp_path), state)
    assert mock_llm.log()[-1]["response_format"] == "json_schema"
    assert state.manifest.llm is not None and state.manifest.llm["probe"] is None
    assert state.manifest.llm["roles"]["reviewer"]["structured_output_source"] == "default"


def test_a_models_file_with_an_unknown_structured_output_names_the_field(tmp_path: Path) -> None:
    from agentic_codemod.errors import InputError

    bad = tmp_path / "models.yml"
    bad.write_text("roles: {coder: {structured_output: xml}}\n")
    with pytest.raises(InputError, match=r"models.yml: field 'roles.coder.structured_output'"):
        load_models(None, environ={"CODEMOD_LLM_MODELS": str(bad)})
