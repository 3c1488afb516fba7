"""The end of a run: settle() decides what the artifacts hold, write_all() only writes it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from agentic_codemod.config import Settings
from agentic_codemod.models import RunManifest
from agentic_codemod.status import Status
from agentic_codemod.task import load_task
from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow import artifacts
from agentic_codemod.workflow.state import RunPaths, RunState

TASK = Path(__file__).resolve().parents[2] / "fixtures" / "tasks" / "acme-sdk-2.yml"


def a_run_that_failed_before_any_step(tmp_path: Path) -> RunState:
    manifest = RunManifest(run_id="r", tool_version="0", mode="offline", started_at="now")
    manifest.end(Status.FAILED, "the index is down")
    return RunState(
        task=load_task(TASK),
        settings=Settings(),
        repo=tmp_path / "repo",
        paths=RunPaths(tmp_path / "run"),
        manifest=manifest,
        context_root=tmp_path,
        trace=Trace(None),
    )


def test_settle_says_why_nothing_was_reviewed_and_write_all_writes_exactly_that(tmp_path: Path) -> None:
    state = a_run_that_failed_before_any_step(tmp_path)
    settled = artifacts.settle(state)
    assert settled.verdict.verdict == "unsure" and "the index is down" in settled.verdict.summary
    assert settled.draft.ready is False and settled.draft.title.startswith("[not ready]")

    def snapshot() -> dict[str, object]:
        fields = {k: v for k, v in state.__dict__.items() if k not in ("trace", "manifest")}
        return copy.deepcopy(fields) | {"manifest": state.manifest.model_dump()}

    before = snapshot()
    artifacts.write_all(state.paths, settled)
    assert snapshot() == before

    run_dir = state.paths.run_dir
    assert sorted(p.name for p in run_dir.iterdir()) == sorted(artifacts.ARTIFACTS)
    assert json.loads((run_dir / "review.json").read_text())["verdict"] == "unsure"
    assert json.loads((run_dir / "run.json").read_text())["status"] == "failed"
    assert (run_dir / "merge_request.md").read_text().startswith(f"# {settled.draft.title}\n\n")
    assert (run_dir / "changes.patch").read_bytes() == b""


def test_write_all_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    state = a_run_that_failed_before_any_step(tmp_path)
    settled = artifacts.settle(state)
    artifacts.write_all(state.paths, settled)
    first = {p.name: p.read_bytes() for p in state.paths.run_dir.iterdir()}
    artifacts.write_all(state.paths, settled)
    assert {p.name: p.read_bytes() for p in state.paths.run_dir.iterdir()} == first
