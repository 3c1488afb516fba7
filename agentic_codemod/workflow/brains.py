"""Brains fill the model's roles in the workflow. The topology is the same for every brain.

`RuleBrain` (offline) fills them deterministically: facts from the adapter, a plan from the task and the
rules, no implementation beyond the rules, a mechanical review, a templated merge request text.
`LlmBrain` (llm/brain.py) puts agents compiled from the APM package into the same roles.
"""

from __future__ import annotations

from pathlib import Path
from string import Template
from typing import Protocol

from agentic_codemod import __version__
from agentic_codemod.adapters.install_scripts import CI
from agentic_codemod.config import MR_ITEM_MAX_CHARS, MR_LOCKED_NAMES
from agentic_codemod.models import (
    SCRIPT_KIND,
    ChangePlan,
    Dependency,
    Finding,
    MergeRequestDraft,
    ReviewVerdict,
    VerificationResult,
)
from agentic_codemod.mr_text import code, prose
from agentic_codemod.publish.gitlab import inert_text, inert_title
from agentic_codemod.status import Status
from agentic_codemod.workflow import codemod
from agentic_codemod.workflow.declarations import kept_off_target
from agentic_codemod.workflow.environments import sdk_key
from agentic_codemod.workflow.lock_changes import same_version
from agentic_codemod.workflow.state import RunState

TEMPLATES = Path(__file__).parent / "templates"
# The mechanical review's own findings (the gates' findings carry their gate's codes).
EMPTY, RED = "review.candidate_empty", "review.verification_red"


class Brain(Protocol):
    name: str
    mode: str
    addresses_human_items: bool  # whether implement() works on the plan's requires_human items
    # whether implement() reads the baseline's result (its first try gets it as `failure`): then the
    # pipeline waits for the baseline's tests first; a brain without the attribute counts as reading it
    reads_baseline: bool

    def recon(self, state: RunState) -> list[str]:
        """Notes to add to the deterministic RepoProfile."""
        ...

    def plan(self, state: RunState, plan: ChangePlan) -> ChangePlan:
        """Refine the deterministic plan (steps, requires_human); never widen allowed paths or criteria."""
        ...

    def implement(self, state: RunState, iteration: int, failure: VerificationResult | None) -> bool:
        """Try to make the tests pass. Return False when there is nothing more to try."""
        ...

    def review(self, state: RunState, gate_findings: list[Finding]) -> ReviewVerdict:
        """Judge the frozen candidate."""
        ...

    def scribe(self, state: RunState) -> MergeRequestDraft:
        """Write the merge request text."""
        ...


class RuleBrain:
    """Offline mode: the rules are all there is."""

    name = "rules"
    mode = "offline"
    addresses_human_items = False
    reads_baseline = False  # implement edits nothing: the baseline's tests may still run meanwhile

    def recon(self, state: RunState) -> list[str]:
        return []

    def plan(self, state: RunState, plan: ChangePlan) -> ChangePlan:
        return plan

    def implement(self, state: RunState, iteration: int, failure: VerificationResult | None) -> bool:
        state.trace.record(
            actor="rules",
            tool="implement",
            arguments={"iteration": iteration},
            result="offline mode: no edits beyond the codemod rules",
            decision="allowed",
        )
        return False

    def review(self, state: RunState, gate_findings: list[Finding]) -> ReviewVerdict:
        return mechanical_review(state, gate_findings, reviewer=self.name)

    def scribe(self, state: RunState) -> MergeRequestDraft:
        return templated_draft(state)


def mechanical_review(state: RunState, gate_findings: list[Finding], reviewer: str) -> ReviewVerdict:
    """Approve only a non-empty candidate whose last verification is green and whose gates all passed."""
    findings = list(gate_findings)
    last = state.last_verification
    if state.candidate is None or not state.candidate.files:
        findings.append(Finding(severity="error", message="the candidate changes nothing", code=EMPTY))
    if last is None or not last.passed:
        findings.append(Finding(severity="error", message="the last verification is not green", code=RED))
    errors = [f for f in findings if f.severity == "error"]
    return ReviewVerdict(
        verdict="reject" if errors else "approve",
        reviewer=reviewer,
        candidate_sha256=state.candidate.sha256 if state.candidate else None,
        summary="; ".join(f.message for f in errors) or "gates passed and verification is green",
        findings=findings,
    )


def bound_draft(title: str, description: str, state: RunState, *, ready: bool) -> MergeRequestDraft:
    """The draft as merge_request.md carries it: a one-line title, no line that GitLab would run as a
    quick action, and the candidate's sha256 (publish refuses a text bound to another candidate)."""
    cand = state.candidate
    binding = f"\n\n<!-- agentic-codemod candidate-sha256={cand.sha256} -->\n" if cand else "\n"
    if state.manifest.isolation == "process":
        description = (
            "**Isolation: process.** The repository's code (installs, tests) ran WITHOUT the sandbox "
            "(`--isolation process`): it could read what the CI job can, so the evidence is weaker.\n\n"
            + description
        )
    return MergeRequestDraft(
        title=inert_title(title), description=inert_text(description.rstrip() + binding), ready=ready
    )


def _item(text: str) -> str:
    """One line of an item for the MR text: tool output (a lockfile tool's stderr, an install log) that
    rode along in a reason stays in run.json and the trace, never in the merge request."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:MR_ITEM_MAX_CHARS]


def _exit_words(run: VerificationResult) -> str:
    """The exit code as a reader takes it: the tool's must-fail canary makes a green run's exit non-zero."""
    canary = (
        ", the tool's must-fail canary test failing as it must"
        if run.passed and run.canary == "failed"
        else ""
    )
    return f"exit {run.exit_code}{canary}"


def _tested_locks(state: RunState, file: str) -> str:
    """What else the refresh changed that the tests ran on, as locked (run.json `locked` has it all)."""
    changes, adapter = state.lock_changes.get(file), state.adapter
    if changes is None or adapter is None:
        return ""
    tested = [
        code(f"{name} {v['tested']}")
        for name, v in state.manifest.locked.get(file, {}).items()
        if name in changes.entries
        and isinstance(v["tested"], str)
        and any(same_version(adapter, v["tested"], locked) for locked in v["locked"] or [])
    ]
    if not tested:
        return ""
    more = f" and {len(tested) - MR_LOCKED_NAMES} more" if len(tested) > MR_LOCKED_NAMES else ""
    return f"; the tests ran on what else it now locks: {', '.join(tested[:MR_LOCKED_NAMES])}{more}"


def _bumped(state: RunState) -> list[Dependency]:
    """The SDK's declarations (lock entries too) in files the candidate changes."""
    touched = set(state.candidate.files) if state.candidate else set()
    return [d for d in (state.profile.sdk_declarations if state.profile else []) if d.file in touched]


def _lock_lines(state: RunState) -> str:
    """One line per lockfile the candidate changes: its own tool rewrote it (a lock entry admits nothing),
    and what else the tests ran on as it now locks."""
    sdk, bumps = state.task.sdk, _bumped(state)
    locks = {d.file: [e.specifier for e in bumps if e.file == d.file] for d in bumps if d.role == "lock"}
    return "".join(
        f"\n- {code(file)}: refreshed by its own tool (it locked {sdk.name} {', '.join(versions)})"
        + _tested_locks(state, file)
        for file, versions in locks.items()
    )


def _kept_lines(state: RunState) -> str:
    """One line per test-minimum pin or constraints file left on a version `to` is not (kept on purpose,
    declarations.kept_off_target): whatever installs with it still gets the old version."""
    sdk = state.task.sdk
    kept = kept_off_target(sdk, state.profile.sdk_declarations if state.profile else [])
    return "".join(
        f"\n- left as it was: {code(d.file)}"
        + (f" line {d.line}" if d.line else "")
        + f" {code(d.name + d.specifier)}, which excludes {sdk.to} ("
        + (
            f"installed by {d.section}, which the tool does not edit: a job that tests an old version "
            "on purpose keeps it; any other still installs the old version, so change it by hand)"
            if d.kind == SCRIPT_KIND and d.section == CI
            else f"in {d.section}, which the tool does not edit: a minimum-pins or constraints file keeps "
            "an old version on purpose; if this one does not, change it by hand)"
            if d.kind == SCRIPT_KIND
            else "a test-minimum pin or constraints file, kept on purpose; an install that reads it still "
            f"gets the old version: to have it bumped, name {code(d.file)} in the task's sdk.also_bump)"
        )
        for d in kept
    )


def _plain_bump_text(state: RunState, changes: str, verification: str) -> tuple[str, str]:
    sdk, base = state.task.sdk, state.baseline
    edited = [d for d in _bumped(state) if d.role != "lock"]
    lines = "".join(f"\n- {code(d.file)}: {code(d.name + d.specifier)} now admits {sdk.to}" for d in edited)
    lines += _lock_lines(state)
    changes = (
        f"No code change was needed: a plain bump of {sdk.name} ({sdk.from_range} -> {sdk.to}); the task "
        f"names no migration package, so only the version declaration changed.{lines}\n\n{changes}"
    )
    if base is not None:
        counts = base.tests
        tally = f"{counts.passed} passed, {counts.failed + counts.errors} failing" if counts else "no counts"
        verification = (
            f"Before the bump (baseline): {_exit_words(base)} ({tally}).\n\nAfter the bump: {verification}"
        )
    return changes, verification


def _verify_only_text(state: RunState) -> tuple[str, str]:
    """A verify-only run (plan.verify_only) edits nothing: what it tested, on which version of the SDK."""
    sdk, plan, m = state.task.sdk, state.plan, state.manifest
    verdict = f"No change is needed: {prose(_item(m.reason))}\n\n" if m.status == Status.NOTHING_TO_DO else ""
    changes = f"{verdict}Nothing was edited ({prose(_item(plan.reason if plan else 'verify only'))})."
    runs = []
    for v in state.verifications:
        env = m.environments.get("baseline" if v.phase == "baseline" else "after") or {}
        version = env.get(sdk_key(state), "unknown")
        counts = v.tests
        tally = f"{counts.passed} passed, {counts.failed + counts.errors} failing" if counts else "no counts"
        runs.append(f"- {v.phase} on {sdk.name} {version}: {'green' if v.passed else 'red'} ({tally})")
    return changes, "\n".join(runs) or "No verification ran."


def templated_draft(state: RunState) -> MergeRequestDraft:
    task, plan, verdict, cand = state.task, state.plan, state.verdict, state.candidate
    last = state.last_verification
    approved = verdict is not None and verdict.verdict == "approve"
    title = f"{task.title} ({task.sdk.name} -> {task.sdk.to})"
    if not approved:
        title = f"[not ready] {title}"
    changes = "\n".join(f"- {code(f)}" for f in (cand.files if cand else [])) or "- nothing"
    changes += "".join(f"\n- {line}" for line in codemod.provenance(state.manifest.rule_edits))
    if task.migration is not None:  # a plain bump says it in its own paragraph (_plain_bump_text)
        changes += _lock_lines(state)
    changes += "".join(  # a format the team's own tool may not read: the reviewer decides
        f"\n- {code(file)}: rewritten by its lock tool in {code(f['after'])} (was {code(f['before'])}); "
        "older versions of that tool may warn about it or not read it fully"
        for file, f in state.manifest.lock_formats.items()
    )
    if last is None:
        verification = "No verification ran."
    else:
        counts = last.tests
        tally = (
            f"{counts.passed} passed, {counts.failed} failed, {counts.errors} errors, "
            f"{counts.skipped} skipped"
            if counts
            else "no counts"
        )
        verdict_word = "passed" if last.passed else "failed"  # the exit code includes the must-fail canary
        command = code(" ".join(last.command))
        verification = f"{command} {verdict_word} ({_exit_words(last)}; {tally}), {last.duration_s}s"
        if state.test_command is not None:  # where the command came from: an auditor's first question
            verification += f"\n\nTest command taken from: {prose(_item(state.test_command.source))}."
    if plan is not None and plan.verify_only:  # nothing edited: the text says so and shows both test runs
        changes, verification = _verify_only_text(state)
    elif task.migration is None:  # a plain bump: the MR says so, with the version change and both test runs
        changes, verification = _plain_bump_text(state, changes, verification)
    changes += _kept_lines(state)
    unread = state.manifest.installs.get("baseline", {}).get("unread")
    if unread:  # the repository's own install reads it, the tests here could not
        verification += (
            "\n\nThe repository's own install of its tests also reads what the tool could not, so the "
            f"tests here ran without it (its CI may install other versions): "
            f"{code(unread[:MR_ITEM_MAX_CHARS])}"
        )
    if last is not None and last.sdk_resolution == "unknown":  # the check could not answer: say so
        verification += (
            f"\n\nWhere these tests load {code(task.sdk.name)} from could not be checked (run.json "
            f"`sdk_resolution`: unknown): this result alone does not show that they ran the installed "
            f"{task.sdk.to}."
        )
    findings = (
        "\n".join(
            f"- {f.severity}: {prose(_item(f.message))}" + (f" ({code(f.path)})" if f.path else "")
            for f in (verdict.findings if verdict else [])
        )
        or "- none"
    )
    handed = set(cand.files) if cand and state.addresses_human_items else set()  # the agents worked on these
    human = (
        "\n".join(
            f"- {prose(_item(h.reason))}"
            + (f" — {code(h.file + (f':{h.line}' if h.line else ''))}" if h.file else "")
            + (
                " (handed to the coder: the candidate changes this file, verified and reviewed)"
                if h.file in handed and h.rule_id is not None  # only a rule's match can be worked off
                else ""
            )
            for h in (plan.requires_human if plan else [])
        )
        or "- nothing"
    )
    reviewed = verdict is not None and verdict.reviewer != "none"
    summary = (
        prose(_item(verdict.summary))
        if verdict is not None and reviewed
        else f"Not reviewed: the run ended `{state.manifest.status}`; run.json holds the reason."
    )
    text = Template((TEMPLATES / "merge_request.md").read_text(encoding="utf-8")).safe_substitute(
        title=title,
        summary=summary,
        changes=changes,
        verification=verification,
        verdict=verdict.verdict if verdict else "none",
        reviewer=verdict.reviewer if verdict else "none",
        candidate=(cand.sha256[:12] if cand else "none"),
        base=(state.base_commit[:12] or "none"),
        findings=findings,
        human=human,
        criteria="\n".join(f"- {' '.join(c.split())}" for c in task.acceptance_criteria),
        version=__version__,
        run_id=state.manifest.run_id,
        mode=state.manifest.mode,
    )
    return bound_draft(title, text, state, ready=approved)
