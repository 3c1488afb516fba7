"""The baseline's test run beside the bump (issue 13: a run that costs little more than its own tests).

    run(state) -> str               the baseline step's tests: beside the bump where they can be, else at
                                    once; the step's result text
    join(state)                     the baseline's tests are over: recorded first among the verifications,
                                    then checked as the baseline step always checked them (a baseline that
                                    proves no working test command, or whose canary passed, ends the run)
    settle(state, cancel=)          the workflow has ended: a baseline still running is waited for,
                                    recorded and checked (a baseline the run cannot trust ends it, as when
                                    it ran first), or with cancel=True stopped (its process group killed)

The two test runs of a run are independent evidence: the base tree on `from`, the candidate on `to`. Once
the baseline environment is installed and listed, its tests run in a thread of their own while the bump
installs into a copy of that environment (Adapter.copy_environment, made while they run), the codemod
edits and the first verification runs the candidate's tests. That verification (or the brain's first
implement, where the brain reads the baseline) joins them before anything is decided, so every gate
reads what it read when they ran one after the other.

Why this shares nothing the tests could use (the repository's code is hostile):
  - each box has its own pid, net, ipc and uts namespaces and its own tmpfs HOME and TMP; the baseline's
    box sees the baseline environment read-only and its own copy of the base tree, never the bump's
    environment, the worktree, the other copy or the run dir;
  - the bump's environment is copied from the baseline's while the baseline's tests run, which see it
    read-only: nothing they do reaches what is copied, and the copy is not mounted in their box;
  - the base tree the baseline's results are checked against is a copy made before the bump edits the
    worktree (a data file a test rewrites with its own bytes is compared with it, not with the edited one).
Only with sandbox isolation (under `--isolation process` the tests share the host's ports, HOME, TMP and
a writable environment), settings.concurrent_baseline, a test command that does not spread its tests over
the cores itself (TestFacts.parallel: pytest-xdist, stestr, jest's workers; beside each other both runs
would only take longer, each nearer its timeout), and an environment the adapter can copy; otherwise the
baseline's tests run in the baseline step (the trace says why) and the bump installs into their
environment after them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass
from pathlib import Path

from agentic_codemod.config import CANCEL_WAIT_S
from agentic_codemod.errors import BudgetExceeded, CodemodError, RequiresHuman
from agentic_codemod.models import VerificationResult
from agentic_codemod.tools import repo_copy
from agentic_codemod.workflow import verify
from agentic_codemod.workflow.state import RunState, need
from agentic_codemod.workflow.test_runs import (
    Place,
    changed_files,
    tests_on,
    time_left,
    timed_tests,
    untrusted,
)

PHASE = "baseline"


@dataclass
class BaselineRun:
    """The baseline's tests while they run: their result to come, the event that stops them, the base tree
    their copy was made from."""

    result: Future[VerificationResult]
    cancel: threading.Event
    tree: Path


def run(state: RunState) -> str:
    """The baseline's tests, beside the bump where they can run there (see the module docstring)."""
    why_not = _one_after_the_other(state)
    if why_not is not None:
        state.trace.record(
            actor="verification",
            tool="baseline_one_after_the_other",
            arguments={},
            result=f"the baseline's tests run before the bump: {why_not}",
            decision="allowed",
        )
        result = timed_tests(state, PHASE)  # charged there
        _check(state, _record(state, result), state.paths.worktree)
        return _summary(result)
    paths, baseline_env, setup = state.paths, need(state.env), need(state.setup)
    left = time_left(state)
    strict = changed_files(paths.worktree, state.base_commit)
    repo_copy.fresh_copy(paths.worktree, paths.baseline_tree)  # the base tree, kept as it is now
    place = Place(paths.baseline_tree, paths.baseline_copy, baseline_env, setup.policy)
    timeout = min(state.settings.budgets.verification_timeout_s, left)
    pending = BaselineRun(Future(), threading.Event(), paths.baseline_tree)

    def target() -> None:
        try:
            pending.result.set_result(tests_on(state, place, PHASE, strict, timeout, pending.cancel))
        except BaseException as exc:  # the joining thread raises it
            pending.result.set_exception(exc)

    thread = threading.Thread(target=target, name="baseline-tests", daemon=True)
    try:
        state.baseline_run = pending
        thread.start()
    except BaseException as exc:  # no thread (a process limit), or a cancel: nothing will ever answer
        if thread.ident is None:
            pending.result.set_exception(exc)
        raise
    after = need(state.adapter).copy_environment(baseline_env, paths.env_after)
    if after is None:  # no copy: the bump installs into the baseline's environment, after its tests
        repo_copy.discard(paths.env_after)
        return join(state)
    after.install["copied_from"] = f"the baseline environment ({baseline_env.root.name}), as installed"
    state.env = after
    state.setup = dataclasses.replace(setup, policy=dataclasses.replace(setup.policy, env_dir=after.root))
    state.trace.record(
        actor="verification",
        tool="baseline_beside_bump",
        arguments={"environment": str(baseline_env.root), "copy": str(after.root)},
        result="the baseline's tests run on the baseline environment while the bump installs into its copy",
        decision="allowed",
    )
    return f"baseline: tests running beside the bump (its environment copied to {after.root.name})"


def join(state: RunState) -> str:
    """Wait for the baseline's tests running beside the bump, record them, check them (RequiresHuman or
    BudgetExceeded where the baseline step would have ended the run); what they said ("" when none were
    running)."""
    pending = state.baseline_run
    if pending is None:
        return ""
    try:
        result = pending.result.result()
    except KeyboardInterrupt:  # cancelled while waiting: settle(cancel=True) stops them
        raise
    except BaseException:
        state.baseline_run = None
        repo_copy.discard(pending.tree)
        raise
    state.baseline_run = None
    try:
        _check(state, _record(state, _charged(state, result)), pending.tree)
    finally:
        repo_copy.discard(pending.tree)
    return _summary(result)


def settle(state: RunState, *, cancel: bool) -> None:
    """After the workflow: the baseline's tests still running (a step ended the run before any joined them)
    are waited for, recorded and checked, and a baseline the run cannot trust ends it with the baseline's
    reason, as when it ran first (state.error, the step's own error kept in the notes); with cancel=True
    they are stopped instead (their group killed, waited for at most CANCEL_WAIT_S) and not recorded."""
    pending = state.baseline_run
    if pending is None:
        return
    if cancel:
        pending.cancel.set()
    try:
        try:
            result = pending.result.result(timeout=CANCEL_WAIT_S if cancel else None)
        except KeyboardInterrupt:  # cancelled while waiting: stop them, and wait for that
            pending.cancel.set()
            _stopped(pending)
            raise
        except Exception:
            return  # cancelled, they could not run, or they did not stop in time: nothing to record
        if cancel:
            return
        _record(state, _charged(state, result))
        try:
            _check(state, result, pending.tree)
        except CodemodError as problem:
            if state.error is not None:
                state.notes.append(
                    f"the run also ended at a later step: {type(state.error).__name__}: {state.error}"
                )
            state.error = problem
    finally:
        state.baseline_run = None
        repo_copy.discard(pending.tree)


def _stopped(pending: BaselineRun) -> None:
    with contextlib.suppress(TimeoutError, CancelledError):
        pending.result.exception(timeout=CANCEL_WAIT_S)


def _one_after_the_other(state: RunState) -> str | None:
    """Why the baseline's tests may not run beside the bump, or None: they may."""
    if not state.settings.concurrent_baseline:
        return "concurrent_baseline is false"
    if need(state.policy).isolation != "sandbox":
        return "isolation process: the test runs would share the host's ports, HOME, TMP and environment"
    if len(os.sched_getaffinity(0)) < 2:
        return "one core: beside each other, the two test runs would only take turns"
    if need(state.adapter).test_facts.parallel(need(state.test_command), state.paths.worktree):
        return "the test command runs its tests on several processes itself: beside it, they would compete"
    return None


def _charged(state: RunState, result: VerificationResult) -> VerificationResult:
    """Charged to the run's verification time budget (a run of timed_tests charges itself)."""
    state.verification_s += result.duration_s
    return result


def _record(state: RunState, result: VerificationResult) -> VerificationResult:
    state.baseline = result
    state.verifications.insert(0, result)  # the baseline is the first verification, whenever it ends
    return result


def _check(state: RunState, result: VerificationResult, tree: Path) -> None:
    """What ends a run at its baseline: no working test command, results something rewrites, a test run
    writing the repository's files; and, beside the bump, the verification time budget spent."""
    budgets = state.settings.budgets
    problem = verify.baseline_problem(result, need(state.adapter).test_facts)
    if problem is not None:
        raise RequiresHuman(
            f"{problem}: {' '.join(result.command)}",
            hint="declare the test dependencies (tox deps, a test extra or group, test-requirements.txt) "
            "or set verification: {command, requirements, extras} in the task or the config; "
            "verification is required to publish",
        )
    distrust = untrusted(state, result, tree)
    if distrust is not None:
        raise distrust
    if result.tampered:
        raise RequiresHuman(
            "the repository's own test run writes its files: " + ", ".join(result.tampered[:5]),
            hint="a test run that changes the code under test proves nothing; make the tests write to tmp",
        )
    if state.verification_s > budgets.max_verification_total_s:  # both runs counted, as one after the other
        raise BudgetExceeded(
            "max_verification_total_s", budgets.max_verification_total_s, round(state.verification_s)
        )


def _summary(result: VerificationResult) -> str:
    counts = result.tests
    return f"baseline: exit {result.exit_code}, " + (
        f"{counts.passed} passed, {counts.failed + counts.errors} failing" if counts else "no counts"
    )
