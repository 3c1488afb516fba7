"""Fixtures: a finished run's directory, and hand-built run states (no workflow runs)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import TASKS
from lessons_support import RUN_ID

from agentic_codemod.config import Settings
from agentic_codemod.models import ChangePlan, HumanItem, RunManifest
from agentic_codemod.status import Status
from agentic_codemod.task import load_task
from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow.state import RunPaths, RunState


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A finished run's directory: run.json with two verifications, plan.json, changes.patch."""
    where = tmp_path / "runs" / "one"
    where.mkdir(parents=True)
    run = {"run_id": RUN_ID, "verifications": [{"phase": "baseline"}, {"phase": "iteration-1"}]}
    (where / "run.json").write_text(json.dumps(run))
    (where / "plan.json").write_text(json.dumps({"requires_human": [{"rule_id": "ACME900"}]}))
    (where / "changes.patch").write_text("")
    return where


@pytest.fixture
def make_state(tmp_path: Path) -> Callable[..., RunState]:
    """A RunState as the workflow leaves it, built by hand (no workflow runs)."""

    def make(task: str = "acme-sdk-2.yml", status: str = "requires_human", **fields: Any) -> RunState:
        spec = load_task(TASKS / task)
        paths = RunPaths(tmp_path / "run")
        paths.run_dir.mkdir(parents=True, exist_ok=True)
        manifest = RunManifest(
            run_id=RUN_ID, tool_version="0", mode="offline", started_at="2024-05-01T12:00:00+00:00"
        )
        manifest.status = Status(status)
        state = RunState(
            task=spec,
            settings=Settings(),
            repo=tmp_path,
            paths=paths,
            manifest=manifest,
            context_root=tmp_path,
            trace=Trace(None),
        )
        state.plan = ChangePlan(
            task_id=spec.id,
            sdk=spec.sdk.name,
            target_version=spec.sdk.to,
            allowed_paths=spec.allowed_paths,
            acceptance_criteria=spec.acceptance_criteria,
            requires_human=[
                HumanItem(reason="getattr", file="src/acme_app/reports.py", line=19, rule_id="ACME900")
            ],
        )
        for key, value in fields.items():
            setattr(state, key, value)
        return state

    return make
