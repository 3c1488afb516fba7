"""ClineBrain: the agents' brain with the Cline CLI as the coder (`agentic-codemod run --coder cline`).

Scout, planner, reviewer and scribe stay the agno agents (LlmBrain); only `implement` changes:

1. the run's worktree (the rules' result included) is copied to a scratch directory inside the run dir;
2. Cline runs there with the plan, the migration notes and the failing tests as its prompt, on the
   coder role's endpoint and model, bounded by the coder's wall clock (budgets.role_seconds.coder, never
   past what is left of budgets.max_run_seconds) — its process group is killed when that runs out
   (coders/cline.py), in bubblewrap with the endpoint as its only network (coders/cline_sandbox.py);
3. what it changed enters the worktree only through the Workspace (tools/workspace.py): the same rooted
   path checks, deny globs, allowed paths and budgets as the agno coder's edit tools. Every changed path
   is checked before anything is written; one refused path rejects the whole iteration (exit 1) and
   nothing of it is applied. A symlink, a non-UTF-8 file or a file that is not regular is refused too;
4. verification, review and every gate then run unchanged on the worktree.

Outcomes: success only on Cline's exit 0 with finishReason "completed" and at least one applied change.
Endpoint unreachable: pause (75). Killed on the wall clock: BudgetExceeded (1). Anything else: rejected (1)
with Cline's reason. Cline's JSON event log stays in the run dir (cline/iteration-N/cline.jsonl).
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from datetime import datetime
from pathlib import Path

from agentic_codemod.coders.cline import ClineConfig, ClineResult, find_cline, run_cline
from agentic_codemod.errors import BudgetExceeded, CandidateRejected, EnvironmentUnavailable, InputError
from agentic_codemod.llm.agent_tools import evidence
from agentic_codemod.llm.brain import LlmBrain, _migration_notes, _sections, _task
from agentic_codemod.models import VerificationResult
from agentic_codemod.tools.paths import Refused
from agentic_codemod.tools.trace import Trace
from agentic_codemod.tools.workspace import Workspace
from agentic_codemod.workflow import gates
from agentic_codemod.workflow.state import RunState, need

ACTOR = "cline"
ASK = (
    "Make the change by editing the files of this working directory. Stay inside the allowed paths; never "
    "edit, skip or delete tests; add no dependency. Stop with a short summary when the change is made."
)


class ClineBrain(LlmBrain):
    name = "agents+cline"

    def implement(self, state: RunState, iteration: int, failure: VerificationResult | None) -> bool:
        plan = state.plan
        red = failure if failure is not None and failure.phase != "baseline" and not failure.passed else None
        if red is None and not (plan and plan.requires_human):
            state.trace.record(
                "pipeline", "implement", {"iteration": iteration}, "nothing for the coder yet: verify first"
            )
            return True
        plan_text = (
            plan.model_dump_json(indent=1, include={"steps", "requires_human", "allowed_paths", "lessons"})
            if plan
            else "none"
        )
        prompt = _sections(
            ("Task", _task(state)),
            ("Plan", plan_text),
            ("Migration notes", _migration_notes(state)),
            ("Failing tests", evidence(red) if red else "not run yet after the rules"),
            ("Ask", ASK),
        )
        config = self._config(state, iteration)
        ws = need(state.workspace)
        scratch = config.data_dir / "workspace"
        shutil.copytree(ws.root, scratch, symlinks=True)
        try:
            result = run_cline(scratch, prompt, config)
            state.manifest.models[ACTOR] = config.model
            _record(state, iteration, result)
            _raise_for(result, config)
            applied = apply_changes(ws, state.trace, state.base_commit or "HEAD", scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if not applied:
            raise CandidateRejected(
                f"cline completed without changing a file (iteration {iteration})",
                hint=f"its last words: {result.text[:300]!r}",
            )
        return True

    def _config(self, state: RunState, iteration: int) -> ClineConfig:
        spec = state.context.agent_for_step("implement")
        role = self._role(state, spec.model_role)
        binary = find_cline(os.environ, [state.context_root.resolve(), Path.cwd()])
        if binary is None:
            raise InputError(
                "--coder cline: the cline CLI is not installed",
                hint="npm install --prefix .cache/cline cline@3.0 (bootstrap.sh does), or set CODEMOD_CLINE",
            )
        budgets = state.settings.budgets
        left = budgets.max_run_seconds - (time.time() - _started(state))
        budget = min(budgets.role_seconds.get(spec.model_role, left), left)
        if budget <= 0:
            raise BudgetExceeded("max_run_seconds", budgets.max_run_seconds, budgets.max_run_seconds - left)
        data_dir = state.paths.run_dir / "cline" / f"iteration-{iteration}"
        return ClineConfig(
            binary,
            role.model,
            role.base_url,
            data_dir,
            float(budget),
            api_key=role.api_key,
            isolation=state.settings.isolation,
            bwrap=state.settings.bwrap,
            budget_name=f"role_seconds.{spec.model_role}" if budget < left else "max_run_seconds",
        )


def apply_changes(ws: Workspace, trace: Trace, base: str, scratch: Path) -> list[str]:
    """Bring the scratch copy's changes into the worktree through the Workspace; all checked first."""
    paths: set[str] = set()
    for change in [*gates.changed_paths(scratch, base), *gates.changed_paths(ws.root, base)]:
        paths.update(p for p in (change.path, change.old_path) if p)
    edits: dict[str, str | None] = {}
    refused: list[str] = []
    for rel in sorted(paths):
        new, problem = _read(scratch, rel)
        if problem:
            refused.append(f"{rel}: {problem}")
            continue
        old, _ = _read(ws.root, rel)
        if new == old:
            continue
        try:
            ws.resolve(rel, write=True)
        except Refused as exc:
            refused.append(f"{rel}: {exc.reason}")
            continue
        edits[rel] = new
    if refused:
        for line in refused:
            trace.record(ACTOR, "apply", {"path": line.split(":", 1)[0]}, "", "refused", line)
        raise CandidateRejected(
            f"cline changed what the coder may not change; nothing of it was applied: {'; '.join(refused)}",
            hint="the same rooted paths, deny globs and allowed paths hold for every coder",
        )
    for rel, text in edits.items():
        if text is None:
            ws.delete(rel, ACTOR)
        else:
            ws.write(rel, text, ACTOR)
    return sorted(edits)


def _read(root: Path, rel: str) -> tuple[str | None, str]:
    """(text or None when absent, problem): only regular UTF-8 files reached without a symlink."""
    path, current = root / rel, root
    for part in Path(rel).parts[:-1]:
        current = current / part
        if current.is_symlink():
            return None, "reached through a symlink"
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return None, "a symlink"
    if not stat.S_ISREG(info.st_mode):
        return None, "not a regular file"
    try:
        return path.read_bytes().decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, "not UTF-8 text"


def _started(state: RunState) -> float:
    try:
        return datetime.fromisoformat(state.manifest.started_at).timestamp()
    except (TypeError, ValueError):
        return time.time()


def _record(state: RunState, iteration: int, result: ClineResult) -> None:
    state.trace.record(
        ACTOR,
        "implement",
        {"iteration": iteration, "exit_code": result.exit_code, "finish_reason": result.finish_reason},
        f"{result.reason}; {result.events} event(s); usage {result.usage}",
        "allowed" if result.ok else "refused",
        "" if result.ok else result.reason,
    )


def _raise_for(result: ClineResult, config: ClineConfig) -> None:
    if result.ok:
        return
    if result.unreachable:
        raise EnvironmentUnavailable(result.reason, hint="start the model endpoint (CODEMOD_LLM_BASE_URL)")
    if result.killed:
        raise BudgetExceeded(config.budget_name, round(config.budget_s, 1), round(config.budget_s, 1))
    raise CandidateRejected(result.reason, hint=f"Cline's events: {config.data_dir / 'cline.jsonl'}")
