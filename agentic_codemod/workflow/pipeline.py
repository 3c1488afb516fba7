"""The one agno Workflow of agentic-codemod, steps top to bottom (ARCHITECTURE.md §3).

    intake → recon → plan → anything to do? → baseline → bump → codemod
           → Loop(implement → verify) → review → scribe → gate

The baseline's tests run beside bump, codemod and the first verification where the sandbox allows it
(baseline_run.py); that verification, or a brain's first implement that reads them, joins them before
anything is decided on them.

A verify-only plan (nothing to edit, but no declaration proves the repository is on `to`) edits nothing:
the baseline runs on `from`, the bump step only installs exactly `to`, and the first verify ends the run,
`nothing_to_do` when green, requires_human when red (_verified_on_target).

agno swallows step failures by default (a failed step is skipped and the run reports `completed`).
Here every step runs inside `_guard`: an exception is recorded on the run state and ends the workflow
at once (`StepOutput(stop=True, success=False)`); after the workflow, `run_workflow` re-raises it, so a
failing step always fails the run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from agentic_codemod.config import MR_ITEM_MAX_CHARS
from agentic_codemod.errors import CandidateRejected, RequiresHuman
from agentic_codemod.models import VerificationResult
from agentic_codemod.workflow import baseline_run, outcome, steps, verify
from agentic_codemod.workflow.brains import Brain
from agentic_codemod.workflow.candidate import candidate_patch
from agentic_codemod.workflow.environments import sdk_key
from agentic_codemod.workflow.review_gates import kept_passing_gate, test_count_gate
from agentic_codemod.workflow.state import RunState, Stop, need

os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.workflow import Loop, Step, StepInput, StepOutput, Workflow


def build_workflow(state: RunState, brain: Brain) -> Workflow:
    guard = _Guard(state)
    state.addresses_human_items = brain.addresses_human_items

    def anything_to_do(s: RunState) -> str:
        plan = s.plan
        if plan is not None and plan.nothing_to_do:
            raise Stop(plan.reason)
        if plan is not None and plan.if_installed:
            return "verify only, if the repository's dependencies install the SDK: nothing to edit"
        return "verify only: nothing to edit, both versions are tested" if _verify_only(s) else "yes"

    def codemod(s: RunState) -> str:
        return "verify only: no rule applies" if _verify_only(s) else steps.apply_codemod(s)

    def implement(s: RunState) -> str:
        if _verify_only(s):  # nothing to edit: whatever the brain, the candidate stays empty
            s.brain_done = True
            return "verify only: nothing to implement"
        if s.task.migration is None:  # a plain bump: no notes, so nothing may migrate (ARCHITECTURE §10)
            s.brain_done = True
            return "plain bump: no migration package, nothing to implement"
        iteration = s.verification_count  # baseline counts as 0 → first iteration is 1
        if getattr(brain, "reads_baseline", True):  # its first try reads the baseline's failures
            baseline_run.join(s)
        changed = brain.implement(s, iteration, s.last_verification)
        s.brain_done = not changed
        return "changed" if changed else "nothing more to try"

    def verify(s: RunState) -> str:
        iteration = s.verification_count
        if iteration > 1 and s.brain_done:
            return "skipped: nothing changed since the last verification"
        result = steps.run_verification(s, f"iteration-{iteration}")
        if _verify_only(s):
            _verified_on_target(s)  # stops the run either way: green (nothing to do) or red (a human)
        if s.task.migration is None:
            _plain_bump_red(s)
        return result

    def loop_done(_outputs: list[StepOutput]) -> bool:
        last = state.last_verification
        return (
            state.error is not None
            or state.brain_done
            or (last is not None and last.phase != "baseline" and last.passed)
        )

    return Workflow(
        name="agentic-codemod",
        description="one repository, one candidate, full evidence",
        steps=[
            guard.step("intake", lambda s: outcome.intake(s)),
            guard.step("recon", lambda s: steps.recon(s, brain)),
            guard.step("plan", lambda s: steps.plan(s, brain)),
            guard.step("anything_to_do", anything_to_do),
            guard.step("baseline", steps.baseline),
            guard.step("bump", steps.bump),
            guard.step("codemod", codemod),
            Loop(
                name="implement_verify",
                steps=[guard.step("implement", implement), guard.step("verify", verify)],
                end_condition=loop_done,
                max_iterations=state.settings.budgets.max_iterations,
            ),
            guard.step("review", lambda s: steps.review(s, brain)),
            guard.step("scribe", lambda s: steps.scribe(s, brain)),
            guard.step("gate", outcome.decide),
        ],
    )


def run_workflow(state: RunState, brain: Brain) -> None:
    """Run the workflow; re-raise whatever ended it early. Returns normally only after the gate step."""
    workflow = build_workflow(state, brain)
    try:
        workflow.run(input=f"{state.task.id} on {state.repo.name}")
    except BaseException:  # cancelled (SIGINT, SIGTERM): the baseline's tests stop with the run
        baseline_run.settle(state, cancel=True)
        raise
    baseline_run.settle(state, cancel=False)  # a step ended the run before the baseline was joined
    if state.error is not None:
        raise state.error
    ran = [s["step"] for s in state.manifest.steps]
    if state.stopped is None and "gate" not in ran:
        raise RuntimeError(
            f"the workflow ended without reaching the gate (ran: {', '.join(ran) or 'nothing'})"
        )


def _verify_only(state: RunState) -> bool:
    return state.plan is not None and state.plan.verify_only


def _verified_on_target(state: RunState) -> None:
    """End a verify-only run (plan.verify_only): green on `to` with nothing edited is `nothing_to_do`, proven
    by the test run (Stop; never `succeeded`: there is no candidate to publish); red is a human's job,
    naming the failing tests."""
    sdk, last = state.task.sdk, state.last_verification
    if last is None or last.phase == "baseline":
        raise RuntimeError("internal: a verify-only run ended without a verification on the target")
    changed = candidate_patch(state.paths.worktree, state.base_commit)
    if changed:  # nothing may have been edited; fail closed if anything was
        raise CandidateRejected(f"a verify-only run changed the worktree ({len(changed)} bytes of diff)")
    base = (state.manifest.environments.get("baseline") or {}).get(sdk_key(state), sdk.from_range)
    lost = [f.message for gate in (test_count_gate(state), kept_passing_gate(state)) for f in gate.findings]
    if last.passed and lost:  # green, but not every test that passed on the baseline passed on `to`
        raise RequiresHuman(
            f"the tests pass on {sdk.name} {sdk.to} with no change, but not all of the baseline's "
            f"({sdk.name} {base}): {'; '.join(lost)}"[:MR_ITEM_MAX_CHARS],
            hint="look at why those tests do not run on the target before calling it verified",
        )
    items = [item.reason for item in need(state.plan).requires_human]
    if last.passed and items:  # green, but what the install left is a human's (a package capping the SDK)
        found = f"the tests pass on {sdk.name} {sdk.to} with no change, but: {'; '.join(items)}"
        raise RequiresHuman(
            found[:MR_ITEM_MAX_CHARS],
            hint="the repository's own install would not test what this run tested: see run.json plan",
        )
    if last.passed:
        counts = f"{last.tests.passed} test(s)" if last.tests else "the tests"
        raise Stop(
            f"verified on {sdk.name} {sdk.to}: {counts} pass there, as on {sdk.name} {base} (baseline), with "
            "no change; the declarations already admit it, so there is nothing to change or publish"
        )
    failing = last.tests.failing if last.tests else []
    which = ", ".join(failing) if failing else no_test_failed(last)
    if len(which) > MR_ITEM_MAX_CHARS:
        which = which[:MR_ITEM_MAX_CHARS] + f" ... ({len(failing)} failing)"
    note = {
        "pre-existing": f"as on {sdk.name} {base}, the baseline",
        "introduced": f"new since {sdk.name} {base}, the baseline",
    }.get(verify.classify(state.baseline, last), f"baseline on {sdk.name} {base}")
    raise RequiresHuman(
        f"tests fail on {sdk.name} {sdk.to} ({note}), and the declarations admit {sdk.to} without a change "
        f"(verify only, nothing edited): {which}",
        hint="pin or cap the declaration by hand, or migrate the code"
        + ("" if state.task.migration else " (a migration package: agentic-codemod init, docs/tutorial.md)"),
    )


def _plain_bump_red(state: RunState) -> None:
    """A plain bump (no `migration:`) whose tests broke is a human's job: no notes, no migration. Failures
    the baseline already had are left to the gate, which calls them pre-existing."""
    last = state.last_verification
    if last is None or last.passed or verify.classify(state.baseline, last) == "pre-existing":
        return
    failing = last.tests.failing if last.tests else []
    before = set(state.baseline.tests.failing) if state.baseline and state.baseline.tests else set()
    which = red_tests(failing, before) if failing else no_test_failed(last)
    raise RequiresHuman(
        f"tests fail after the bump and no migration notes exist for {state.task.sdk.name}: {which}",
        hint="write a migration package for it (agentic-codemod init, docs/tutorial.md) and name it in "
        "the task's migration:",
    )


def no_test_failed(result: VerificationResult) -> str:
    """A red run without a failing test id, with the last line of its output (a runner that crashed as it
    started: pytest's own traceback, an ImportError of a plugin the project installs; helper-45)."""
    lines = [line.strip() for line in result.output_tail.splitlines() if line.strip()]
    ends = f"; its output ends: {lines[-1][: MR_ITEM_MAX_CHARS // 2]}" if lines else ""
    return f"exit {result.exit_code}, no failing test id{ends}"


def red_tests(failing: list[str], before: set[str]) -> str:
    """The failing tests of a red run, the bump's own first and the baseline's named apart, cut at
    MR_ITEM_MAX_CHARS with both counts after the cut (the cut may fall before the baseline's part)."""
    new = [t for t in failing if t not in before]
    old = [t for t in failing if t in before]
    which = ", ".join(new or failing)
    if new and old:
        which += f" (failing on the baseline too: {', '.join(old)})"
    if len(which) <= MR_ITEM_MAX_CHARS:
        return which
    counts = (
        f"{len(new)} new, {len(old)} failing on the baseline too"
        if new and old
        else f"{len(failing)} failing"
    )
    return which[:MR_ITEM_MAX_CHARS] + f" ... ({counts})"


class _Guard:
    """Wraps step functions so that agno can neither retry nor skip them silently."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def step(self, name: str, fn: Callable[[RunState], str]) -> Step:
        def executor(_step_input: StepInput) -> StepOutput:
            state = self.state
            record: dict[str, Any] = {"step": name}
            state.manifest.steps.append(record)
            if state.error is not None or state.stopped is not None:
                record["result"] = "not run"
                return StepOutput(content="not run", stop=True, success=False)
            record["started_at"] = datetime.now(UTC).isoformat(timespec="milliseconds")
            start = time.monotonic()  # the report's step timeline (report/)
            try:
                record["result"] = fn(state)
                return StepOutput(content=record["result"])
            except Stop as stop:
                record["result"] = f"stop: {stop}"
                state.stopped = str(stop)
                return StepOutput(content=str(stop), stop=True)
            except BaseException as exc:  # recorded here, re-raised by run_workflow after agno returns
                if isinstance(exc, KeyboardInterrupt | SystemExit):
                    raise
                record["result"] = f"error: {type(exc).__name__}: {exc}"
                state.error = exc
                return StepOutput(content=record["result"], stop=True, success=False, error=str(exc))
            finally:
                record["duration_s"] = round(time.monotonic() - start, 3)

        return Step(name=name, executor=executor, max_retries=0)
