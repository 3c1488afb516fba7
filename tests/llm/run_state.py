"""A RunState around a small git repository, for tests that call agent tools or one brain step."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agentic_codemod.config import Settings
from agentic_codemod.models import RunManifest
from agentic_codemod.task import load_task
from agentic_codemod.tools.trace import Trace
from agentic_codemod.tools.workspace import Workspace
from agentic_codemod.workflow.state import RunPaths, RunSetup, RunState

ROOT = Path(__file__).resolve().parents[2]
SOURCE = 'OPERATIONS = {\n    "load": "fetch",\n}\n'


def make_state(tmp_path: Path, **budgets: int) -> RunState:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "src" / "reports.py").write_text(SOURCE)
    (repo / "tests" / "test_reports.py").write_text("def test_ok():\n    assert True\n")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *argv], cwd=repo, check=True, env={**os.environ, **env})
    task = load_task(ROOT / "fixtures" / "tasks" / "acme-sdk-2.yml")
    settings = Settings().for_task([], budgets)
    trace = Trace(None)
    state = RunState(
        task=task,
        settings=settings,
        repo=repo,
        paths=RunPaths(tmp_path / "run"),
        manifest=RunManifest(run_id="test", tool_version="0", mode="llm", started_at="now"),
        context_root=ROOT,
        trace=trace,
    )
    state.paths.run_dir.mkdir()
    workspace = Workspace(repo, allowed_paths=task.allowed_paths, budgets=settings.budgets, trace=trace)
    state.setup = setup_with(workspace=workspace)
    return state


def setup_with(**parts: object) -> RunSetup:
    """An intake's setup holding only the parts a test gives (the brain tests need no clone or sandbox)."""
    fields: dict[str, object] = dict.fromkeys(("context", "adapter", "policy", "runner", "workspace"))
    return RunSetup(**{**fields, "base_commit": "", **parts})  # type: ignore[arg-type]
