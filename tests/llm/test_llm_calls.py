"""One model call, bounded and on the record: retries by meaning, time budgets, the context check, the
trace line, and agno's log lines off the console (driven through the reviewer against the mock)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mock_llm import MockLLM
from test_llm_brain import reviewed_state

from agentic_codemod.errors import BudgetExceeded, EnvironmentUnavailable, ServiceTimeout
from agentic_codemod.llm.agent_runner import AgentRunner
from agentic_codemod.llm.errors import ContextTooLong, EndpointRefused
from agentic_codemod.llm.factory import Clock, load_models
from agentic_codemod.models import ReviewVerdict
from agentic_codemod.workflow.state import RunState

PROMPT = "## Acceptance criteria\n- works\n\n## Ask\nJudge the patch. Answer with a ReviewVerdict."


def runner(mock: MockLLM, tmp_path: Path, reviewer: str = "{}") -> AgentRunner:
    path = tmp_path / "models.yml"
    path.write_text(
        f"defaults: {{model: mock-model, timeout_s: 1, max_retries: 1}}\nroles: {{reviewer: {reviewer}}}\n"
    )
    env = {"CODEMOD_LLM_MODELS": str(path), "CODEMOD_LLM_BASE_URL": mock.url}
    return AgentRunner(load_models(None, environ=env))


def review(agents: AgentRunner, state: RunState) -> Any:
    return agents.run(state, "review", PROMPT, ReviewVerdict)[0]


def model_calls(state: RunState) -> list[dict[str, Any]]:
    return [line for line in state.trace.lines() if line["tool"] == "model_call"]


def test_a_permanent_500_is_sent_once_and_ends_with_1_not_75(mock_llm: MockLLM, tmp_path: Path) -> None:
    mock_llm.behave("no-json-schema")
    state = reviewed_state(tmp_path)
    with pytest.raises(EndpointRefused) as caught:
        review(runner(mock_llm, tmp_path), state)
    assert caught.value.exit_code == 1 and len(mock_llm.log()) == 1  # max_retries 1, yet never re-sent
    reason = str(caught.value)
    assert "does not support what the request asks for (HTTP 500)" in reason and "structured_output" in reason
    assert "Traceback" not in reason and "site-packages" not in reason and "\n" not in reason
    line = json.loads(model_calls(state)[0]["result"])
    assert (line["http_status"], line["error"], line["kind"]) == (500, "unsupported", "permanent")
    assert "Traceback (most recent call last)" in line["server"]  # the whole message is in the trace


def test_a_busy_server_is_asked_again_after_retry_after(mock_llm: MockLLM, tmp_path: Path) -> None:
    mock_llm.fault("http-429")  # retry-after: 0
    with pytest.raises(EnvironmentUnavailable) as caught:
        review(runner(mock_llm, tmp_path), reviewed_state(tmp_path))
    assert caught.value.exit_code == 75 and "HTTP 429 after 2 attempt(s) (busy)" in str(caught.value)
    assert len(mock_llm.log()) == 2 and mock_llm.log()[1]["retry"] in (None, "0")  # ours, not the client's


def test_a_timed_out_request_is_not_sent_again_to_a_busy_server(mock_llm: MockLLM, tmp_path: Path) -> None:
    mock_llm.behave("serial")
    mock_llm.fault("slow", delay_s=3)
    with pytest.raises(ServiceTimeout, match="not re-sent"):
        review(runner(mock_llm, tmp_path), reviewed_state(tmp_path))
    assert len(mock_llm.log()) == 1


def test_each_model_call_is_one_trace_line(mock_llm: MockLLM, tmp_path: Path) -> None:
    state = reviewed_state(tmp_path)
    assert review(runner(mock_llm, tmp_path), state).verdict == "reject"  # the prompt holds no fix
    [line] = model_calls(state)
    args, result = line["arguments"], json.loads(line["result"])
    assert line["actor"] == "reviewer" and (args["role"], args["model"]) == ("reviewer", "mock-model")
    assert args["request_chars"] > len(PROMPT) and args["tool_choice"] == "auto" and args["attempt"] == 1
    assert result["http_status"] == 200 and result["finish_reason"] == "stop"
    assert result["prompt_tokens"] > 0 and result["completion_tokens"] > 0 and result["duration_s"] >= 0


def test_agno_log_lines_go_to_the_trace_not_the_console(
    mock_llm: MockLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mock_llm.fault("http-500")
    state = reviewed_state(tmp_path)
    with pytest.raises(EnvironmentUnavailable):
        review(runner(mock_llm, tmp_path), state)
    out = capsys.readouterr()
    assert "ERROR" not in out.out and "ERROR" not in out.err
    assert any(line["actor"] == "agno" and "500" in line["result"] for line in state.trace.lines())


def test_the_run_budget_ends_the_run_before_a_call(mock_llm: MockLLM, tmp_path: Path) -> None:
    state = reviewed_state(tmp_path)
    state.settings = state.settings.model_copy(
        update={"budgets": state.settings.budgets.narrowed({"max_run_seconds": 60})}
    )
    state.manifest.started_at = (datetime.now(UTC) - timedelta(hours=2)).isoformat()
    with pytest.raises(BudgetExceeded, match="budget 'max_run_seconds' exceeded"):
        review(runner(mock_llm, tmp_path), state)
    assert mock_llm.log() == []


def test_a_role_budget_shrinks_the_request_timeout_and_ends_the_run(
    mock_llm: MockLLM, tmp_path: Path
) -> None:
    mock_llm.fault("slow", delay_s=3)
    state = reviewed_state(tmp_path)
    state.settings = state.settings.model_copy(
        update={"budgets": state.settings.budgets.narrowed({"role_seconds": {"reviewer": 0.5}})}
    )
    agents = runner(mock_llm, tmp_path, reviewer="{timeout_s: 30}")
    with pytest.raises(BudgetExceeded, match=r"budget 'role_seconds\.reviewer' exceeded"):
        review(agents, state)
    assert len(mock_llm.log()) == 1
    assert model_calls(state)[0]["arguments"]["timeout_s"] <= 0.5


def test_budgets_of_the_clock() -> None:
    late = Clock(10, started=time.time() - 11)
    with pytest.raises(BudgetExceeded, match="'max_run_seconds' exceeded"):
        late.check("coder")
    clock = Clock(100, {"coder": 5})
    clock.spent["coder"] = 6
    with pytest.raises(BudgetExceeded, match=r"'role_seconds\.coder' exceeded: 6\.0 > 5"):
        clock.check("coder")
    assert 99 < clock.check("scout") <= 100


def test_a_prompt_that_cannot_fit_the_reported_context_is_not_sent(mock_llm: MockLLM, tmp_path: Path) -> None:
    mock_llm.behave(max_model_len=300)
    state = reviewed_state(tmp_path)
    agents = runner(mock_llm, tmp_path)
    with pytest.raises(ContextTooLong) as caught:
        agents.run(state, "review", PROMPT + "x" * 3000, ReviewVerdict)
    assert mock_llm.log() == [] and caught.value.exit_code == 1
    assert "agent reviewer (role reviewer)" in str(caught.value) and "context of 300 tokens" in str(
        caught.value
    )
    assert state.manifest.llm is not None and state.manifest.llm["roles"]["reviewer"]["context_tokens"] == 300
    assert review(agents, state).verdict == "reject"  # a prompt that fits is sent and answered
