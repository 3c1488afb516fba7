"""The agents' sandbox tools: only what the agent file allows, every call checked and traced, budgets stop
the agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from agno.exceptions import StopAgentRun
from run_state import make_state

from agentic_codemod.errors import BudgetExceeded
from agentic_codemod.llm.agent_tools import AgentTools
from agentic_codemod.llm.factory import Meter


def tools_for(tmp_path: Path, allowed: list[str], **budgets: int) -> AgentTools:
    return AgentTools(make_state(tmp_path, **budgets), "coder", allowed, Meter(), max_model_calls=10)


def test_the_allowlist_decides_which_functions_exist(tmp_path: Path) -> None:
    names = [f.__name__ for f in tools_for(tmp_path, ["read", "diff"]).functions()]
    assert names == ["read_file", "show_diff"]
    coder = [f.__name__ for f in tools_for(tmp_path / "c", ["read", "edit", "run_verification"]).functions()]
    assert coder == ["read_file", "write_file", "replace_in_file", "run_verification"]


def test_an_edit_goes_through_the_workspace_and_lands_in_the_trace(tmp_path: Path) -> None:
    tools = tools_for(tmp_path, ["read", "edit", "diff"])
    assert (
        tools.replace_in_file("src/reports.py", '"load": "fetch"', '"load": "get"')
        == "ok: src/reports.py changed"
    )
    assert tools.edits == 1
    assert '+    "load": "get",' in tools.show_diff()
    line = next(entry for entry in tools.state.trace.lines() if entry["tool"] == "replace")
    assert (line["actor"], line["decision"]) == ("coder", "allowed")


def test_refusals_and_errors_go_back_to_the_model_as_text(tmp_path: Path) -> None:
    tools = tools_for(tmp_path, ["read", "edit"])
    assert tools.write_file("tests/test_reports.py", "").startswith("refused: outside allowed_paths")
    assert tools.write_file(".gitlab-ci.yml", "x").startswith("refused: deny glob")
    assert tools.read_file("src/missing.py").startswith("error:")
    assert tools.replace_in_file("src/reports.py", "nowhere", "x").startswith("error:")
    assert tools.edits == 0
    refused = tools.state.trace.refusals()
    assert [r["tool"] for r in refused] == ["write", "write"]


def test_the_hook_stops_the_agent_past_the_tool_call_budget(tmp_path: Path) -> None:
    tools = tools_for(tmp_path, ["read"], max_tool_calls=2)
    read = tools.functions()[0]
    assert "OPERATIONS" in tools.hook("read_file", read, {"path": "src/reports.py"})
    assert "OPERATIONS" in tools.hook("read_file", read, {"path": "src/reports.py"})
    with pytest.raises(StopAgentRun):
        tools.hook("read_file", read, {"path": "src/reports.py"})
    assert isinstance(tools.stopped, BudgetExceeded) and tools.stopped.budget == "max_tool_calls"


def test_the_hook_stops_the_agent_past_the_model_call_budget(tmp_path: Path) -> None:
    tools = tools_for(tmp_path, ["read"])
    tools.meter.model_calls = 11
    with pytest.raises(StopAgentRun):
        tools.hook("read_file", tools.functions()[0], {"path": "src/reports.py"})
    assert tools.stopped is not None and tools.stopped.budget == "max_model_calls"


def test_the_hook_refuses_a_tool_the_agent_was_not_given(tmp_path: Path) -> None:
    tools = tools_for(tmp_path, ["read"])
    reply = tools.hook("write_file", lambda **_: "written", {"path": "src/reports.py", "content": ""})
    assert reply.startswith("refused: write_file is not one of your tools")
    assert tools.state.trace.refusals()[0]["reason"] == "tool not allowed"
