"""Run-wide budgets that no single step sees: verification time, and tasks that only narrow limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.adapters import types as adapter_types
from agentic_codemod.config import Budgets, Settings
from agentic_codemod.errors import BudgetExceeded
from agentic_codemod.models import RunManifest
from agentic_codemod.task import load_task
from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow.state import RunPaths, RunSetup, RunState
from agentic_codemod.workflow.test_runs import timed_tests

TASK = Path(__file__).resolve().parents[2] / "fixtures" / "tasks" / "acme-sdk-2.yml"


def never_called(*args: object, **kwargs: object) -> object:
    raise AssertionError("no test command may start once the verification budget is spent")


def test_spent_verification_time_stops_the_next_run_before_it_starts(tmp_path: Path) -> None:
    settings = Settings(budgets=Budgets(max_verification_total_s=30))
    state = RunState(
        task=load_task(TASK),
        settings=settings,
        repo=tmp_path,
        paths=RunPaths(tmp_path),
        manifest=RunManifest(run_id="r", tool_version="0", mode="offline", started_at="now"),
        context_root=tmp_path,
        trace=Trace(None),
    )
    state.test_command = adapter_types.TestCommand(
        argv=["{interpreter}", "-m", "pytest"], source="test", runner="pytest"
    )
    state.env = adapter_types.VerificationEnv(interpreter=Path("/usr/bin/python3"), root=tmp_path)
    fields: dict[str, object] = dict.fromkeys(("context", "adapter", "policy", "workspace"))
    state.setup = RunSetup(**fields, base_commit="", runner=never_called)  # type: ignore[arg-type]
    state.verification_s = 30.0
    with pytest.raises(BudgetExceeded) as caught:
        timed_tests(state, "iteration-2")
    assert (caught.value.budget, caught.value.limit) == ("max_verification_total_s", 30)


def test_a_task_can_only_lower_budgets_role_limits_included() -> None:
    base = Budgets(max_tool_calls=80, role_tool_calls={"coder": 120})
    narrowed = base.narrowed(
        {"role_tool_calls": {"coder": 500, "reviewer": 10}, "max_run_tool_calls": 10_000}
    )
    assert narrowed.role_tool_calls == {"coder": 120, "reviewer": 10}
    assert narrowed.max_run_tool_calls == base.max_run_tool_calls
