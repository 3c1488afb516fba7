"""fleet.json: one entry per repository — outcome, evidence pointers, wall time — and the resume rule.

    entry_from_run(repo, run_dir, exit_code, wall_s) -> FleetEntry     read back from the run's run.json
    read_report(path) / write_report(path, report)
    can_skip(previous, task_sha256, repo_path) -> str | None           why an earlier success still holds

A repository is skipped on a rerun only when its earlier run, for the same task file (sha256), ended
`succeeded`, its changes.patch still hashes to the recorded candidate, and the repository's HEAD is still
the base commit that candidate was made on. Anything else runs again.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentic_codemod.models import RunManifest
from agentic_codemod.status import Outcome, Status, worst
from agentic_codemod.tools.safe_git import run_git
from agentic_codemod.workflow.candidate import patch_sha256

CRASHED = "crashed"  # the fleet's status for a repository whose run left no readable run.json


class FleetEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    repo: str
    run_dir: str
    status: Status | Literal["crashed"]  # the run's status, or CRASHED when the run left no run.json
    outcome: Outcome  # status.outcome; failed for CRASHED
    exit_code: int
    reason: str = ""
    run_id: str | None = None
    base_commit: str | None = None
    candidate_sha256: str | None = None
    files_changed: int = 0
    verification: str = "not run"
    tokens: dict[str, Any] | None = None  # None: unknown
    wall_s: float = 0.0
    resumed: bool = False  # True: this rerun skipped the repository, the entry is from an earlier run


class FleetReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["agentic-codemod/fleet@1"] = "agentic-codemod/fleet@1"
    task_id: str
    task_sha256: str
    jobs: int
    started_at: str
    finished_at: str | None = None
    wall_s: float = 0.0
    repos: list[FleetEntry] = Field(default_factory=list)

    def totals(self) -> dict[str, int]:
        counts = dict.fromkeys([*Outcome, "resumed"], 0)
        for entry in self.repos:
            counts[entry.outcome] += 1
            counts["resumed"] += entry.resumed
        return counts

    def exit_code(self) -> int:
        """The code of the worst outcome: failed (1), else paused (75), else needs_human (3), else 0."""
        return int(worst([e.outcome for e in self.repos]).exit_code)


def entry_from_run(
    name: str, repo: Path, run_dir: Path, exit_code: int, wall_s: float, note: str = ""
) -> FleetEntry:
    try:
        m = RunManifest.model_validate(json.loads((run_dir / "run.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        return FleetEntry(
            name=name,
            repo=str(repo),
            run_dir=str(run_dir),
            status=CRASHED,
            outcome=Outcome.FAILED,
            exit_code=exit_code,
            reason=note or f"no readable run.json: {type(exc).__name__}",
            wall_s=round(wall_s, 2),
        )
    last = m.verifications[-1] if m.verifications else None
    verification = "not run"
    if last is not None:
        state = "green" if last.passed else "red"
        t = last.tests
        verification = f"{state} {t.passed}/{t.passed + t.failed + t.errors} passed" if t else state
    return FleetEntry(
        name=name,
        repo=str(repo),
        run_dir=str(run_dir),
        status=m.status,
        outcome=m.status.outcome,
        exit_code=exit_code,
        reason=note or m.reason,
        run_id=m.run_id,
        base_commit=m.base_commit,
        candidate_sha256=m.candidate.sha256 if m.candidate else None,
        files_changed=len(m.candidate.files) if m.candidate else 0,
        verification=verification,
        tokens=m.tokens,
        wall_s=round(wall_s, 2),
    )


def read_report(path: Path) -> FleetReport | None:
    try:
        return FleetReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None  # no usable earlier report: everything runs


def write_report(path: Path, report: FleetReport) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def can_skip(
    previous: FleetEntry | None, task_sha256: str, earlier_task_sha256: str, repo: Path
) -> str | None:
    """The reason an earlier success still holds, or None when the repository must run again."""
    if previous is None or previous.status != Status.SUCCEEDED or earlier_task_sha256 != task_sha256:
        return None
    run_dir = Path(previous.run_dir)
    try:
        m = RunManifest.model_validate(json.loads((run_dir / "run.json").read_text(encoding="utf-8")))
        sha = patch_sha256(run_dir / "changes.patch")
    except (OSError, ValueError, ValidationError):
        return None
    if m.status != Status.SUCCEEDED or m.candidate is None or m.candidate.sha256 != sha:
        return None
    if m.candidate.sha256 != previous.candidate_sha256 or _head(repo) != m.candidate.base_commit:
        return None
    return f"same task and candidate {sha[:12]} on unchanged base {m.candidate.base_commit[:12]}"


def _head(repo: Path) -> str | None:
    try:
        proc = run_git(["rev-parse", "HEAD"], cwd=repo)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.decode().strip() if proc.returncode == 0 else None
