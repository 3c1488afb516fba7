"""The first and the last step: intake sets the run up, the gate decides what the run may claim."""

from __future__ import annotations

import os
from pathlib import Path

from agentic_codemod.adapters import get_adapter, secret_files
from agentic_codemod.errors import EnvironmentUnavailable
from agentic_codemod.status import Status
from agentic_codemod.tools import sandbox
from agentic_codemod.tools.sandbox import Policy
from agentic_codemod.tools.verification import SandboxRunner, scrubbed_env
from agentic_codemod.tools.workspace import Workspace
from agentic_codemod.workflow import codemod, verify
from agentic_codemod.workflow.candidate import clone_worktree
from agentic_codemod.workflow.state import RunSetup, RunState


def intake(state: RunState) -> str:
    """Verified context, a private clone, the sandbox around it."""
    from agentic_codemod import apm

    context = apm.load_context(state.context_root, budget_bytes=state.settings.context_budget_bytes)
    state.manifest.apm = context.audit_record()
    adapter = get_adapter(state.task.sdk.ecosystem)
    paths, settings = state.paths, state.settings
    base_commit = clone_worktree(state.repo, paths.worktree)
    state.manifest.base_commit = base_commit
    policy = sandbox_policy(state)
    for d in (paths.home, paths.tmp):
        d.mkdir(parents=True, exist_ok=True)
    env = scrubbed_env(
        dict(os.environ),
        settings.verification_env_allowlist,
        settings.secret_name_markers,
        home=paths.home,
        tmp=paths.tmp,
        extra=adapter.sandbox_env,
    )
    state.setup = RunSetup(
        context=context,
        adapter=adapter,
        base_commit=base_commit,
        policy=policy,
        runner=SandboxRunner(env=env, tail_bytes=settings.budgets.output_tail_bytes, trace=state.trace),
        workspace=Workspace(
            paths.worktree,
            deny_globs=settings.deny_globs,
            allowed_paths=state.task.allowed_paths,
            budgets=settings.budgets,
            trace=state.trace,
        ),
    )
    return f"base {state.base_commit[:12]}, context lock {state.context.lock_sha256[:12]}"


def sandbox_policy(state: RunState) -> Policy:
    """The boxes repository code runs in; a sandbox that cannot start pauses the run (75)."""
    settings, paths = state.settings, state.paths
    state.manifest.isolation = settings.isolation
    if settings.isolation == "sandbox":
        reason = sandbox.probe(settings.bwrap)
        if reason is not None:
            raise EnvironmentUnavailable(
                f"the sandbox for the repository's code cannot start: {reason}",
                hint="install bubblewrap and allow unprivileged user namespaces (docs/gitlab.md), "
                "or accept --isolation process, which every artifact then states",
            )
    index = settings.packages
    wheel_dirs = tuple(Path(link).resolve() for link in index.local if "://" not in link)
    return Policy(
        settings.isolation,
        paths.env_dir,
        wheel_dirs=wheel_dirs,
        index_network=index.reach_network,
        memory_bytes=settings.budgets.sandbox_memory_bytes,
        home=paths.home,
        tmp=paths.tmp,
        bwrap=settings.bwrap,
        hidden=secret_files(dict(os.environ)),
    )


def decide(state: RunState) -> str:
    """Only an approved, green, gate-clean, non-empty candidate with nothing left for a human succeeds."""
    m, verdict, last = state.manifest, state.verdict, state.last_verification
    m.classification = verify.classify(state.baseline, last)  # type: ignore[assignment]
    approved = verdict is not None and verdict.verdict == "approve"
    failed_gates = [g["name"] for g in state.gates if not g["passed"]]
    nonempty = state.candidate is not None and bool(state.candidate.files)
    green = last is not None and last.passed
    left = _unaddressed_human_items(state)
    if state.plan is not None and state.plan.verify_only:  # the verify step ends such a run; fail closed
        m.end(
            Status.REQUIRES_HUMAN,
            "verify only: the run reached the gate without a verdict on the target; nothing to publish",
        )
    elif approved and not failed_gates and nonempty and green and not left:
        m.end(Status.SUCCEEDED, "candidate verified and approved")
    elif not failed_gates and left and (approved or not green):
        who = "rules" if not state.addresses_human_items else "candidate"
        m.end(Status.REQUIRES_HUMAN, f"{len(left)} item(s) the {who} did not resolve: " + "; ".join(left[:3]))
    elif not failed_gates and m.classification == "pre-existing":
        m.end(
            Status.REQUIRES_HUMAN,
            "the tests already failed before the change; the candidate introduced no new failure",
        )
    else:
        m.end(
            Status.REJECTED,
            f"{verdict.reviewer}: {verdict.verdict} — {verdict.summary}" if verdict else "no review verdict",
        )
    return m.reason


def _unaddressed_human_items(state: RunState) -> list[str]:
    """What is still a human's job in the candidate: every item that is not a detect-only rule match (a
    lockfile the tool could not refresh, a file a rule could not edit, a rule edit that brings in
    import-time code, ...), and every applicable detect-only rule match that is still there — unless the
    brain works on such items (agents) and the candidate changed the flagged file, which the verification
    and the review then judged. Among the plan's items: every import in the candidate of an SDK module the
    target no longer ships, whoever wrote it (added at review: removed_imports.py). The scan reuses the
    plan's results for every file that did not change."""
    target = state.task.sdk.to
    versioning = get_adapter(state.task.sdk.ecosystem).versioning
    detect_only = [r for r in state.rules if not r.fixable and r.applies_to(target, versioning)]
    worktree = state.paths.worktree
    matches = codemod.find_matches(detect_only, worktree, state.scanner) if detect_only else []
    touched = set(state.candidate.files) if state.candidate else set()
    items = [
        f"{m.rule_id} {m.file}:{m.line}"
        for m in matches
        if not (state.addresses_human_items and m.file in touched)
    ]
    for h in state.plan.requires_human if state.plan else []:
        if h.rule_id is None:
            items.append(f"{h.reason} ({h.file})" if h.file and h.file not in h.reason else h.reason)
    return items
