"""The seven artifacts every run leaves in --run-dir, whatever its outcome (ARCHITECTURE.md §8)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from agentic_codemod.models import ChangePlan, MergeRequestDraft, RepoProfile, ReviewVerdict, RunManifest
from agentic_codemod.status import Status
from agentic_codemod.workflow.brains import templated_draft
from agentic_codemod.workflow.candidate import freeze
from agentic_codemod.workflow.state import RunPaths, RunState

ARTIFACTS = (
    "run.json",
    "plan.json",
    "profile.json",
    "review.json",
    "merge_request.md",
    "changes.patch",
    "trace.jsonl",
)


def write_json(path: Path, model: BaseModel) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(
        json.dumps(model.model_dump(mode="json"), indent=2, sort_keys=False) + "\n", encoding="utf-8"
    )
    tmp.replace(path)


@dataclass(frozen=True)
class Settled:
    """What the artifacts hold, decided once at the end of a run; writing them changes nothing."""

    profile: RepoProfile
    plan: ChangePlan
    verdict: ReviewVerdict
    draft: MergeRequestDraft
    manifest: RunManifest


def settle(state: RunState) -> Settled:
    """Called in a `finally`: never assumes a step ran. The last change to the run's state: a worktree
    left without a candidate is frozen (inspectable, never reviewed), a missing verdict or draft says
    why, and the manifest takes the results."""
    paths, m = state.paths, state.manifest
    paths.run_dir.mkdir(parents=True, exist_ok=True)
    patch = paths.artifact("changes.patch")
    if state.candidate is None and state.base_commit and (paths.worktree / ".git").exists():
        try:  # partial work stays inspectable, but it is not a reviewed candidate
            state.candidate = freeze(paths.worktree, state.base_commit, patch)
        except (OSError, RuntimeError) as exc:
            state.notes.append(f"could not freeze the worktree: {exc}")
    profile = state.profile or RepoProfile(
        ecosystem=state.task.sdk.ecosystem if state.task else "unknown", notes=[f"no recon: {m.reason}"]
    )
    plan = state.plan or ChangePlan(
        task_id=state.task.id,
        sdk=state.task.sdk.name,
        target_version=state.task.sdk.to,
        reason=f"no plan: {m.reason}",
    )
    verdict = state.verdict or ReviewVerdict(
        verdict="unsure",
        reviewer="none",
        candidate_sha256=state.candidate.sha256 if state.candidate else None,
        summary=f"not reviewed: {m.reason}",
    )
    if state.draft is None or m.status != Status.SUCCEEDED:
        state.verdict = verdict
        state.draft = _draft_for(state)
    m.profile, m.plan, m.verdict, m.candidate = state.profile, state.plan, verdict, state.candidate
    m.verifications = state.verifications
    m.gates = state.gates
    if state.notes:
        m.steps.append({"step": "notes", "result": state.notes})
    return Settled(profile=profile, plan=plan, verdict=verdict, draft=state.draft, manifest=m)


def write_all(paths: RunPaths, settled: Settled) -> None:
    """The seven artifacts, from what settle() decided; reads no run state and changes none."""
    paths.run_dir.mkdir(parents=True, exist_ok=True)
    patch = paths.artifact("changes.patch")
    if not patch.exists():
        patch.write_bytes(b"")
    write_json(paths.artifact("profile.json"), settled.profile)
    write_json(paths.artifact("plan.json"), settled.plan)
    write_json(paths.artifact("review.json"), settled.verdict)
    paths.artifact("merge_request.md").write_text(
        f"# {settled.draft.title}\n\n{settled.draft.description}", encoding="utf-8"
    )
    paths.artifact("trace.jsonl").touch()
    write_json(paths.artifact("run.json"), settled.manifest)


def _draft_for(state: RunState) -> MergeRequestDraft:
    """A merge request text that says why the run did not produce a ready candidate."""
    draft = templated_draft(state)
    m = state.manifest
    if m.status == Status.SUCCEEDED:
        return draft
    # The reason stays in run.json: it may carry tool output (an install's log tail as the hint).
    header = f"**Not ready — status `{m.status}` (exit {m.exit_code}).** run.json holds the reason.\n\n"
    title = draft.title if draft.title.startswith("[not ready]") else f"[not ready] {draft.title}"
    return MergeRequestDraft(title=title, description=header + draft.description, ready=False)
