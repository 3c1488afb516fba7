"""The mock endpoint: OpenAI-shaped answers, the caller recognised, every fault script selectable."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx
import pytest
from mock_llm import SERVER, MockLLM, start_mock


def chat(
    mock: MockLLM,
    agent: str,
    *,
    schema: str | None = None,
    tools: tuple[str, ...] = (),
    history: list[dict[str, Any]] | None = None,
    header: bool = False,
    timeout: float = 10.0,
) -> httpx.Response:
    body: dict[str, Any] = {
        "model": "m",
        "messages": [
            {
                "role": "system",
                "content": f"<additional_information>\n- Your name is: {agent}.\n</additional_information>"
                if not header
                else "no name",
            },
            {"role": "user", "content": "go"},
            *(history or []),
        ],
        "tools": [{"type": "function", "function": {"name": t, "parameters": {}}} for t in tools],
    }
    if schema:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": schema, "schema": {}}}
    headers = {"X-Codemod-Agent": agent} if header else {}
    return httpx.post(f"{mock.url}/chat/completions", json=body, headers=headers, timeout=timeout)


def message(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    return reply.json()["choices"][0]["message"]


def tool_result(name: str, text: str, call_id: str = "c1") -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": text},
    ]


CODER_TOOLS = ("read_file", "replace_in_file", "run_verification")


def test_models_route_lists_a_model(mock_llm: MockLLM) -> None:
    reply = httpx.get(f"{mock_llm.url}/models")
    assert reply.json()["data"][0]["id"]


def test_the_agent_is_recognised_by_the_name_in_the_system_message(mock_llm: MockLLM) -> None:
    chat(mock_llm, "planner", schema="ChangePlan")
    chat(mock_llm, "coder", tools=CODER_TOOLS, header=True)
    chat(mock_llm, "judge", schema="ReviewVerdict")  # a renamed agent still gets the reviewer's script
    log = mock_llm.log()
    assert [(e["agent"], e["recognised_by"]) for e in log] == [
        ("planner", "system message"),
        ("coder", "header"),
        ("judge", "system message"),
    ]
    assert "verdict" in json.loads(message(chat(mock_llm, "judge", schema="ReviewVerdict"))["content"])


def test_the_coder_script_reads_edits_verifies_then_stops(mock_llm: MockLLM) -> None:
    first = message(chat(mock_llm, "coder", tools=CODER_TOOLS))["tool_calls"][0]["function"]
    assert first["name"] == "read_file"
    source = 'OPERATIONS = {\n    "load": "fetch",\n}'
    edit = message(chat(mock_llm, "coder", tools=CODER_TOOLS, history=tool_result("read_file", source)))
    args = json.loads(edit["tool_calls"][0]["function"]["arguments"])
    assert (args["old"], args["new"]) == ('"load": "fetch"', '"load": "get"')
    verify = message(chat(mock_llm, "coder", tools=CODER_TOOLS, history=tool_result("replace_in_file", "ok")))
    assert verify["tool_calls"][0]["function"]["name"] == "run_verification"
    done = message(
        chat(
            mock_llm,
            "coder",
            tools=CODER_TOOLS,
            history=tool_result("run_verification", "verification PASSED"),
        )
    )
    assert "tool_calls" not in done and "PASSED" in done["content"]


def test_replies_carry_usage_unless_the_no_usage_fault_is_on(mock_llm: MockLLM) -> None:
    usage = chat(mock_llm, "scribe", schema="MergeRequestDraft").json()["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    mock_llm.fault("no-usage")
    assert "usage" not in chat(mock_llm, "scribe", schema="MergeRequestDraft").json()


@pytest.mark.parametrize(("fault", "status"), [("http-500", 500), ("http-429", 429), ("auth", 401)])
def test_error_status_faults(mock_llm: MockLLM, fault: str, status: int) -> None:
    mock_llm.fault(fault)
    reply = chat(mock_llm, "scout", schema="RepoProfile")
    assert reply.status_code == status
    assert reply.json()["error"]["message"].startswith("mock-llm:")


def test_malformed_json_fault_sends_a_body_that_is_not_json(mock_llm: MockLLM) -> None:
    mock_llm.fault("malformed-json")
    reply = chat(mock_llm, "scout", schema="RepoProfile")
    assert reply.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(reply.text)


def test_slow_fault_answers_after_the_client_gave_up(mock_llm: MockLLM) -> None:
    mock_llm.fault("slow", delay_s=3)
    with pytest.raises(httpx.ReadTimeout):
        chat(mock_llm, "scout", schema="RepoProfile", timeout=0.5)


def test_schema_invalid_fault_answers_json_of_the_wrong_shape(mock_llm: MockLLM) -> None:
    mock_llm.fault("schema-invalid")
    content = json.loads(message(chat(mock_llm, "planner", schema="ChangePlan"))["content"])
    assert "task_id" not in content


def test_tool_loop_fault_keeps_calling_a_tool(mock_llm: MockLLM) -> None:
    mock_llm.fault("tool-loop")
    history = tool_result("read_file", "text") + tool_result("read_file", "text", "c2")
    reply = message(chat(mock_llm, "coder", tools=CODER_TOOLS, history=history))
    assert reply["tool_calls"][0]["function"]["name"] == "read_file"


def test_tool_call_as_text_fault_puts_the_call_into_content(mock_llm: MockLLM) -> None:
    assert mock_llm.fault("tool-call-as-text")["agent"] == "coder"  # coder-only by default
    reply = message(chat(mock_llm, "coder", tools=CODER_TOOLS))
    assert "tool_calls" not in reply
    assert reply["content"].startswith("<tool_call>") and "replace_in_file" in reply["content"]
    assert "tool_calls" in message(chat(mock_llm, "scout", tools=("search_code",)))  # others unaffected


def test_no_edit_fault_stops_after_reading(mock_llm: MockLLM) -> None:
    mock_llm.fault("no-edit")
    reply = message(
        chat(mock_llm, "coder", tools=CODER_TOOLS, history=tool_result("read_file", '"load": "fetch"'))
    )
    assert "tool_calls" not in reply


def test_a_fault_can_target_one_agent(mock_llm: MockLLM) -> None:
    mock_llm.fault("http-500", agent="reviewer")
    assert chat(mock_llm, "scout", schema="RepoProfile").status_code == 200
    assert chat(mock_llm, "reviewer", schema="ReviewVerdict").status_code == 500
    mock_llm.fault(None)
    assert chat(mock_llm, "reviewer", schema="ReviewVerdict").status_code == 200


def test_an_unknown_fault_is_refused(mock_llm: MockLLM) -> None:
    reply = httpx.post(f"{mock_llm.root}/_control", json={"fault": "meteor"})
    assert reply.status_code == 400 and "unknown fault" in reply.text
    done = subprocess.run([sys.executable, str(SERVER), "--fault", "meteor"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown fault" in done.stderr


def test_a_fault_can_be_chosen_on_the_command_line() -> None:
    mock = start_mock("--fault", "http-500@planner")
    try:
        assert chat(mock, "scout", schema="RepoProfile").status_code == 200
        assert chat(mock, "planner", schema="ChangePlan").status_code == 500
    finally:
        mock.stop()
