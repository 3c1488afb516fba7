"""One run of the repository's tests, as every verification does it (the pipeline's and the coder's).

timed_tests(state, phase) -> VerificationResult     a fresh copy of the candidate, the test box,
                                                    the canary; charged to the run's time budget
untrusted(state, result) -> RequiresHuman | None    the canary did not fail: nothing can be trusted
changed_files(worktree, base) -> set[str]           what the candidate changes so far
"""

from __future__ import annotations

import shutil
from pathlib import Path

from agentic_codemod.errors import BudgetExceeded, RequiresHuman
from agentic_codemod.models import VerificationResult
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.snapshot import snapshot_diff
from agentic_codemod.workflow import oracle, verify
from agentic_codemod.workflow.state import RunState, need


def timed_tests(state: RunState, phase: str, changed: set[str] | None = None) -> VerificationResult:
    """One run of the fixed test command on a fresh copy of the candidate, inside the test box,
    charged to the run's verification time budget. `changed`: the candidate's files, when the caller has
    just listed them (else listed here)."""
    budgets = state.settings.budgets
    left = budgets.max_verification_total_s - state.verification_s
    if left <= 0:
        raise BudgetExceeded(
            "max_verification_total_s", budgets.max_verification_total_s, round(state.verification_s)
        )
    paths, policy = state.paths, need(state.policy)
    stamp = repo_copy.fresh_copy(paths.worktree, paths.copy)
    for rel, target in need(state.env).links.items():  # the environment where the ecosystem looks for it
        link_into_copy(paths.copy, stamp, rel, target)
    reports = paths.reports / phase
    box = policy.for_tests(paths.copy, reports)
    try:
        result = verify.run_tests(
            need(state.test_command),
            interpreter=need(state.env).interpreter,
            copy=paths.copy,
            stamp=stamp,
            runner=need(state.runner).boxed(box).keeping(budgets.test_output_bytes),
            box=box,
            timeout_s=min(budgets.verification_timeout_s, left),
            phase=phase,
            reports_dir=reports,
            facts=need(state.adapter).test_facts,
            source=paths.worktree,
            strict=changed_files(paths.worktree, state.base_commit) if changed is None else changed,
            keep_bytes=budgets.output_tail_bytes,
        )
    finally:
        repo_copy.discard(paths.copy)
    state.verification_s += result.duration_s
    return result


def link_into_copy(copy: Path, stamp: repo_copy.Stamp, rel: str, target: Path) -> None:
    """A symlink at `rel` in the test copy to the environment (npm: node_modules), watched like a
    candidate file; the candidate's own entry at that path, if any, is replaced (it is never published)."""
    path = copy / rel
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target, target_is_directory=True)
    repo_copy.stamp_file(copy, stamp, rel)


def changed_files(worktree: Path, base_commit: str) -> set[str]:
    """The files the candidate changes so far (a test run may not touch them at all)."""
    names = snapshot_diff(worktree, base_commit, "--name-only", "-z").decode("utf-8", "surrogateescape")
    return {n for n in names.split("\0") if n}


def untrusted(state: RunState, result: VerificationResult) -> RequiresHuman | None:
    """Why a verification's results cannot be trusted at all, or None: the canary passed, or went
    missing from a run that completed (exit 0 or 1; an interrupted collection explains its absence, and
    such a run is not green anyway)."""
    if result.canary == "failed" or (result.canary == "missing" and result.exit_code not in (0, 1)):
        return None
    repo_copy.fresh_copy(state.paths.worktree, state.paths.copy)
    try:
        found = oracle.suspects(state.paths.copy, need(state.adapter).test_facts)
    finally:
        repo_copy.discard(state.paths.copy)
    what = "passed" if result.canary == "passed" else "went missing"
    return RequiresHuman(
        f"{result.phase}: the canary test that must fail {what}"
        " — something in the repository rewrites or hides test results; no result can be trusted",
        hint="; ".join(found[:5]) or "no result hook or plugin found: check the test configuration",
    )
