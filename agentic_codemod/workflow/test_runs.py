"""One run of the repository's tests, as every verification does it (the pipeline's and the coder's).

timed_tests(state, phase) -> VerificationResult     a fresh copy of the candidate, the test box,
                                                    the canary; charged to the run's time budget
tests_on(state, place, phase, strict, timeout_s)    the same run on a Place of the caller's (the tree
    -> VerificationResult                           copied, the copy, the environment, its boxes), not
                                                    charged: the baseline beside the bump (baseline_run.py)
untrusted(state, result, tree=) -> RequiresHuman | None
                                                    the canary did not fail: nothing can be trusted;
                                                    or the tests load the SDK from elsewhere
changed_files(worktree, base) -> set[str]           what the candidate changes so far
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_codemod.errors import BudgetExceeded, RequiresHuman
from agentic_codemod.models import VerificationResult
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.snapshot import snapshot_diff
from agentic_codemod.workflow import oracle, verify
from agentic_codemod.workflow.state import RunState, need

if TYPE_CHECKING:
    from agentic_codemod.adapters.types import VerificationEnv
    from agentic_codemod.tools.sandbox import Policy


@dataclass(frozen=True)
class Place:
    """Where one test run happens: the tree its copy is made from (the tests' `source`), the copy, the
    environment it runs on and the policy of its boxes. The baseline beside the bump has one of its own:
    the worktree moves on under it (baseline_run.py)."""

    tree: Path
    copy: Path
    env: VerificationEnv
    policy: Policy


def timed_tests(state: RunState, phase: str, changed: set[str] | None = None) -> VerificationResult:
    """One run of the fixed test command on a fresh copy of the candidate, inside the test box,
    charged to the run's verification time budget. `changed`: the candidate's files, when the caller has
    just listed them (else listed here)."""
    left = time_left(state)
    paths = state.paths
    place = Place(paths.worktree, paths.copy, need(state.env), need(state.policy))
    strict = changed_files(paths.worktree, state.base_commit) if changed is None else changed
    result = tests_on(state, place, phase, strict, min(state.settings.budgets.verification_timeout_s, left))
    state.verification_s += result.duration_s
    return result


def time_left(state: RunState) -> float:
    """What the run's verification time budget leaves; BudgetExceeded when nothing."""
    budgets = state.settings.budgets
    left = budgets.max_verification_total_s - state.verification_s
    if left <= 0:
        raise BudgetExceeded(
            "max_verification_total_s", budgets.max_verification_total_s, round(state.verification_s)
        )
    return left


def tests_on(
    state: RunState,
    place: Place,
    phase: str,
    strict: set[str],
    timeout_s: float,
    cancel: threading.Event | None = None,
) -> VerificationResult:
    """One run of the fixed test command on a fresh copy of `place.tree`, in the test box of `place`;
    `strict`: the candidate's files (a test run may not touch them at all). Reads of the run state are of
    what no step changes once intake and recon ran (command, adapter, runner, budgets, paths), so it may
    run in a thread of its own; `cancel` stops it there (Cancelled)."""
    budgets, paths = state.settings.budgets, state.paths
    stamp = repo_copy.fresh_copy(place.tree, place.copy)
    for rel, target in place.env.links.items():  # the environment where the ecosystem looks for it
        link_into_copy(place.copy, stamp, rel, target)
    reports = paths.reports / phase
    box = place.policy.for_tests(place.copy, reports)
    runner = need(state.runner).boxed(box).keeping(budgets.test_output_bytes)
    try:
        return verify.run_tests(
            need(state.test_command),
            interpreter=place.env.interpreter,
            copy=place.copy,
            stamp=stamp,
            runner=runner if cancel is None else runner.cancelled_by(cancel),
            box=box,
            timeout_s=timeout_s,
            phase=phase,
            reports_dir=reports,
            facts=need(state.adapter).test_facts,
            source=place.tree,
            strict=strict,
            keep_bytes=budgets.output_tail_bytes,
            sdk=state.task.sdk.name,
        )
    finally:
        repo_copy.discard(place.copy)


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


def untrusted(state: RunState, result: VerificationResult, tree: Path | None = None) -> RequiresHuman | None:
    """Why a verification's results cannot be trusted at all, or None: the canary passed, or went
    missing from a run that completed (exit 0, or 1 with a report; an interrupted collection, or a runner
    that died before it wrote any report, explains its absence, and such a run is not green anyway), or
    the test code's loader resolved the SDK outside the installed package (its tests test something
    else). `tree`: what the run's copy was made from (the worktree when None)."""
    if result.sdk_resolution == "elsewhere":
        sdk = state.task.sdk.name
        return RequiresHuman(
            f"{result.phase}: the tests' own module loader resolves {sdk!r} outside the installed package"
            " (a module mapper, alias, mock, resolution hook or copy); they would not test the installed"
            " version",
            hint=f"make the tests load the installed {sdk} (check module mappers, aliases, mocks, preloads,"
            " setup files, and what conftest.py puts in sys.modules or on sys.path), or set"
            " verification.command to a run that does",
        )
    if result.canary == "failed" or (result.canary == "missing" and result.exit_code not in (0, 1)):
        return None
    if result.canary == "missing" and result.exit_code == 1 and result.tests is None:
        return None  # no report at all: the runner crashed as it started (red whatever hid it; helper-45)
    repo_copy.fresh_copy(tree or state.paths.worktree, state.paths.copy)
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
