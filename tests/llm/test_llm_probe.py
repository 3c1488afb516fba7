"""The probe sends what a run sends (the agents' tool_choice, their response_format), checks the tool
call's arguments exactly, reports what the endpoint supports, and writes it where runs read it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from mock_llm import MockLLM, free_port

from agentic_codemod.llm import backend as llm_backend
from agentic_codemod.llm.factory import load_models
from agentic_codemod.llm.probe import ProbeUnavailable, load_for, run_probe, save

ROOT = Path(__file__).resolve().parents[2]


def coder(url: str):  # type: ignore[no-untyped-def]
    return load_models(ROOT, environ={"CODEMOD_LLM_BASE_URL": url, "CODEMOD_LLM_MODEL": "mock-model"}).role(
        "coder"
    )


def test_a_healthy_endpoint_supports_everything_and_runs_use_json_schema(mock_llm: MockLLM) -> None:
    mock_llm.behave(max_model_len=32768)
    result = run_probe(coder(mock_llm.url))
    assert result.ok and result.tool_calls.ok and result.json_schema.ok and result.json_object.ok
    assert result.structured_output == "json_schema" and result.max_model_len == 32768
    assert result.tool_calls.detail == 'codemod_probe({"echo": "ok"})'
    sent = mock_llm.log()
    assert [e["tool_choice"] for e in sent] == ["auto", None, None]  # the coder's tool_choice, with the tools
    assert [e["response_format"] for e in sent] == [None, "json_schema", "json_object"]
    assert all(e["agent"] == "probe" for e in sent)


def test_a_server_that_fails_json_schema_gets_json_object(mock_llm: MockLLM) -> None:
    mock_llm.behave("no-json-schema")
    result = run_probe(coder(mock_llm.url))
    assert result.ok and not result.json_schema.ok and result.json_object.ok
    assert result.json_schema.detail.startswith(
        "HTTP 500 (unsupported): NotImplementedError: response_format"
    )
    assert "Traceback" not in result.json_schema.detail
    assert result.structured_output == "json_object"


def test_with_neither_json_mode_the_structured_output_is_a_tool_call(mock_llm: MockLLM) -> None:
    mock_llm.behave("no-json-schema", "no-json-object")
    result = run_probe(coder(mock_llm.url))
    assert result.ok and result.structured_output == "tool_call"


def test_tools_that_need_tool_choice_are_probed_as_the_agents_send_them(mock_llm: MockLLM) -> None:
    mock_llm.behave("tools-need-choice")
    assert run_probe(coder(mock_llm.url)).tool_calls.ok  # the probe sends tool_choice, as the agents do
    mock_llm.behave("tools-need-choice")
    silent = replace(coder(mock_llm.url), tool_choice="")  # what the old probe did not catch
    result = run_probe(silent)
    assert not result.ok and result.tool_calls.detail.startswith("no tool call")


def test_wrong_echo_arguments_fail_the_probe(mock_llm: MockLLM, own_probe_file: Path) -> None:
    mock_llm.behave("wrong-echo")
    result = run_probe(coder(mock_llm.url))
    assert not result.ok and not result.tool_calls.ok
    assert 'codemod_probe({"echo": "true"}), expected echo=\'ok\'' in result.tool_calls.detail
    env = {"CODEMOD_LLM_BASE_URL": mock_llm.url, "CODEMOD_LLM_MODEL": "mock-model"}
    assert llm_backend.main(["status"], {**env, "CODEMOD_LLM_PROBE": str(own_probe_file)}) == 1


def test_replies_nested_past_the_json_parsers_depth_fail_their_check(mock_llm: MockLLM) -> None:
    """A body, or a tool call's arguments, of `[[[[…` 100,000 deep: json raises RecursionError, not
    ValueError; each is a failed check (or no verdict, for a 500), never a crash of the probe."""
    mock_llm.fault("deep-arguments", agent="probe")
    result = run_probe(coder(mock_llm.url))
    assert not result.ok and result.tool_calls.detail.startswith("wrong call: codemod_probe([[[")
    assert result.json_schema.ok  # only the tool call's arguments were deep
    mock_llm.fault("deep-json")
    result = run_probe(coder(mock_llm.url))
    assert not result.ok and not result.tool_calls.ok and not result.json_schema.ok
    cut = 'not a chat completion: {"id": "chatcmpl-mock", "choices": [[['
    assert result.tool_calls.detail.startswith(cut)
    mock_llm.fault("deep-error")
    with pytest.raises(ProbeUnavailable, match=r'HTTP 500: \{"error": \[\[\['):
        run_probe(coder(mock_llm.url))


def test_the_result_is_saved_for_runs_of_the_same_endpoint_and_model(mock_llm: MockLLM) -> None:
    mock_llm.behave("no-json-schema")
    path = save(run_probe(coder(mock_llm.url)))
    saved = json.loads(path.read_text())
    assert saved["format"] == "agentic-codemod/llm-probe@1" and saved["structured_output"] == "json_object"
    assert load_for(mock_llm.url, "mock-model") == saved
    assert load_for(mock_llm.url + "/", "mock-model") == saved
    assert load_for(mock_llm.url, "another-model") is None
    assert load_for("http://127.0.0.1:1/v1", "mock-model") is None


def test_an_endpoint_that_is_down_or_busy_has_no_verdict(mock_llm: MockLLM) -> None:
    with pytest.raises(ProbeUnavailable, match="unreachable"):
        run_probe(coder(f"http://127.0.0.1:{free_port()}/v1"))
    mock_llm.fault("http-429")
    with pytest.raises(ProbeUnavailable, match="HTTP 429"):
        run_probe(coder(mock_llm.url))
