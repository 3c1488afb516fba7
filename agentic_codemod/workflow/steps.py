"""The deterministic work of each workflow step. pipeline.py wires them into the agno Workflow;
the brain (rules or agents) is consulted only where the design says the model may act."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from agentic_codemod import experience
from agentic_codemod.adapters.types import ArtifactNotice
from agentic_codemod.config import MR_ITEM_MAX_CHARS
from agentic_codemod.errors import (
    CandidateRejected,
    InputError,
    RequiresHuman,
)
from agentic_codemod.models import ChangePlan, HumanItem, RepoProfile
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.paths import allowed_by
from agentic_codemod.tools.rooted import RootedFS
from agentic_codemod.tools.sandbox import install_cache_of
from agentic_codemod.tools.snapshot import GitError, read_blob
from agentic_codemod.workflow import baseline_run, codemod, environments, lock_changes, removed_imports
from agentic_codemod.workflow.brains import Brain
from agentic_codemod.workflow.candidate import candidate_sha256, candidate_sha256_and_files, freeze
from agentic_codemod.workflow.declarations import (
    deciding,
    doubts,
    pending_declarations,
    stale_locks,
    stale_script_locks,
)
from agentic_codemod.workflow.review_gates import judge_candidate
from agentic_codemod.workflow.state import RunState, need
from agentic_codemod.workflow.test_runs import timed_tests, untrusted


def recon(state: RunState, brain: Brain) -> str:
    adapter, root = need(state.adapter), state.paths.worktree
    files = adapter.find_dependency_files(root)
    declarations = adapter.extract_dependencies(root, files, state.task.sdk.name)
    if adapter.install_script_pins is not None:  # Dockerfiles, conda environments, hooks, CI jobs
        declarations += adapter.install_script_pins(
            root, adapter.versioning.canonical_name(state.task.sdk.name)
        )
    state.test_command = adapter.detect_test_command(root, state.settings)
    state.profile = RepoProfile(
        ecosystem=adapter.name,
        dependency_files=files,
        sdk_declarations=declarations,
        test_command=state.test_command.argv if state.test_command else None,
        test_command_source=state.test_command.source if state.test_command else "none found",
        source_files=len(codemod.source_files(root, adapter.name)),
    )
    state.profile.notes.extend(brain.recon(state))
    return f"{len(declarations)} declaration(s) of {state.task.sdk.name} in {len(files)} file(s)"


def _unscanned(state: RunState) -> list[HumanItem]:
    """Code that names the SDK where no loaded rule looks (a `.ts` file under JavaScript rules, a `.pyw`,
    a notebook, a `#!` script): each is a human's item, unless the adapter can give it as a rule
    language's source, in which case it is one only where a rule matches there (as for a file the rules
    read; a file migrated by hand is then no item). None without rules (a plain bump edits no code)."""
    read = need(state.adapter).unscanned_code
    if not state.rules or read is None:
        return []
    sdk, paths = state.task.sdk, state.paths
    found = read(
        paths.worktree, {r.language for r in state.rules}, sdk.name, sdk.import_names, state.settings
    )
    versioning = need(state.adapter).versioning
    applying = [r for r in state.rules if r.applies_to(sdk.to, versioning)]
    sources = {u.path: u.source for u in found if u.source is not None}
    scratch = paths.run_dir / "sandbox" / "unscanned"
    hits = codemod.matches_in_sources(applying, sources, scratch, state.settings.scan) if sources else {}
    items = []
    for u in found:
        if u.source is None:
            items.append(
                HumanItem(
                    reason=f"{u.path or 'the repository'}: {u.why}; migrate it by hand", file=u.path or None
                )
            )
        elif u.path in hits:
            where = ", ".join(f"{h.rule_id} at line {h.line}" for h in hits[u.path][:5])
            items.append(
                HumanItem(
                    reason=f"{u.path}: {u.why}, and the rules match it ({where}); migrate it by hand",
                    file=u.path,
                )
            )
    return items


def plan(state: RunState, brain: Brain) -> str:
    task, profile = state.task, need(state.profile)
    target = task.sdk.to
    pending = pending_declarations(state)
    draft = ChangePlan(
        task_id=task.id,
        sdk=task.sdk.name,
        target_version=target,
        allowed_paths=task.allowed_paths,
        acceptance_criteria=task.acceptance_criteria,
    )
    state.plan = draft
    state.skill = _find_skill(state)  # no migration notes: nobody can tell whether there is work to do
    rules_dir = state.skill.rules_dir if state.skill is not None else None  # None: a plain bump
    disabled = task.migration.disabled_rules if task.migration else []
    state.rules = codemod.load_rules(rules_dir, disabled) if rules_dir else []
    state.scanner = codemod.Scanner(state.paths.worktree, state.settings.scan)  # one cache for the run
    draft.rule_matches = codemod.find_matches(state.rules, state.paths.worktree, state.scanner)
    versioning = need(state.adapter).versioning
    relevant = [m for m in draft.rule_matches if _rule(state, m.rule_id).applies_to(target, versioning)]
    unread = _unscanned(state)
    # Detect-only matches alone do not make work on a repository that is already migrated: they flag a
    # construct, not a break. They still become requires_human items of any run that does work.
    if not pending and not any(m.fixable for m in relevant) and not unread:
        unproven = doubts(task.sdk, profile.sdk_declarations)  # nothing_to_do only on proof
        if unproven:
            draft.verify_only = True
            draft.reason = (
                f"verify only: nothing to edit, but nothing proves the code works on {task.sdk.name} "
                f"{target} ({'; '.join(unproven[:3])}); the tests run on {task.sdk.from_range} and on "
                f"{target}"
            )
            draft.steps = [f"verify on {task.sdk.name} {task.sdk.from_range} and {target}, editing nothing"]
            return draft.reason
        _asked_off_target(state)  # no test runs: what the tests' install asks for must be on `to` too
        if not deciding(task.sdk, profile.sdk_declarations):  # declared nowhere: only an install can tell
            draft.verify_only = draft.if_installed = True
            draft.reason = (
                f"the repository neither declares {task.sdk.name} where a bump edits it nor imports it, "
                f"nor has code a migration rule would change; another package it installs may still bring "
                f"{task.sdk.name} in, so its dependencies are installed alone first: without "
                f"{task.sdk.name} there is nothing to do, with it the tests run on {task.sdk.from_range} "
                f"and on {target}"
            )
            draft.steps = [
                f"install the repository's dependencies alone; if they hold {task.sdk.name}, verify on "
                f"{task.sdk.from_range} and {target}, editing nothing"
            ]
            return draft.reason
        draft.nothing_to_do = True
        draft.reason = (
            f"every declaration of {task.sdk.name} already excludes {task.sdk.from_range} and admits "
            f"{target} (pinned), and no migration rule would change the code"
        )
        return draft.reason
    if not profile.sdk_declarations:
        raise RequiresHuman(
            f"the code matches {len(relevant)} migration rule(s) "
            f"but no supported file declares {task.sdk.name}",
            hint=f"declare it in one of: {', '.join(need(state.adapter).file_patterns)}",
        )
    outside = sorted({d.file for d in pending if not allowed_by(d.file, task.allowed_paths)})
    if outside:
        raise InputError(
            f"task allowed_paths {task.allowed_paths} exclude the dependency file(s) to bump: "
            + ", ".join(outside),
            hint="add them to allowed_paths in the task file",
        )
    draft.requires_human = codemod.human_items(draft.rule_matches, state.rules, target, versioning) + unread
    experience.use_lessons(state, draft, state.settings.experience_budget_bytes)  # hypotheses, never gates
    draft.steps = [
        *(f"bump {d.name} {d.specifier} -> {target} in {d.file}" for d in pending),
        *(f"apply rule {r.id}: {r.description}" for r in state.rules if r.fixable),
        f"verify with {' '.join(profile.test_command or ['(no test command)'])}",
    ]
    state.plan = brain.plan(state, draft)
    return f"{len(pending)} declaration(s) to bump, {len(draft.rule_matches)} rule match(es)"


def _rule(state: RunState, rule_id: str) -> codemod.Rule:
    return next(r for r in state.rules if r.id == rule_id)


def baseline(state: RunState) -> str:
    if need(state.plan).if_installed:  # before the test command: without the SDK there is nothing to test
        environments.install_repository(state)
    command = state.test_command
    if command is None:
        raise RequiresHuman(
            "no test command found: without verification nothing may be published",
            hint=f"give the repository a test command the {need(state.adapter).name} adapter recognises "
            f"(agentic_codemod/adapters/{need(state.adapter).name}/README.md), or name one in the task "
            "or the config (verification.command)",
        )
    environments.install_baseline(state)
    return baseline_run.run(state)


def bump(state: RunState) -> str:
    """Every pending declaration edited first, then the lockfiles refreshed by their own tools: once per
    folder of an edited declaration (each refresh also covers the root's), so the tool sees every edit.
    A lockfile that a later refresh leaves as an earlier one wrote it is refreshed, not a human's job."""
    adapter, ws, target = need(state.adapter), need(state.workspace), state.task.sdk.to
    plan_ = need(state.plan)
    edited = pending_declarations(state)
    for dep in edited:
        content = ws.read(dep.file, actor="bump")
        ws.write(dep.file, adapter.update_dependency(content, dep, target), actor="bump")
    _asked_off_target(state)  # also when nothing was edited (verify only): what the repository asks for
    runner, policy, paths = need(state.runner), need(state.policy), state.paths
    refreshed: set[str] = set()
    folders = {str(PurePosixPath(dep.file).parent): dep for dep in reversed(edited)}
    for dep in sorted(folders.values(), key=edited.index):
        repo_copy.fresh_copy(paths.worktree, paths.copy)  # the ecosystem's lock tool runs on a copy
        try:
            cache = install_cache_of(policy.env_dir) if adapter.lock_cache else None
            box = policy.for_lock(paths.copy, cache)  # the environment read-only: repository code may run
            notices = adapter.update_lockfiles(
                paths.copy, dep, target, runner.boxed(box), cache, policy.index_network
            )
            for notice in notices or []:
                text = _refreshed_text(state, notice) if notice.updated else None
                if notice.updated and text is None:
                    notice = replace(notice, updated=False, message=f"{notice.file} {CHANGED_AFTER}")
                if text is not None:  # the refreshed lockfile enters the candidate through the workspace
                    ws.write_refreshed(notice.file, text, actor="bump")
                    _lock_changes(state, notice.file, text)
                    refreshed.add(notice.file)
                state.trace.record(
                    actor="bump",
                    tool="update_lockfile",
                    arguments={"file": notice.file},
                    result=notice.message or "updated",
                    decision="allowed",
                )
                if not notice.updated and notice.file not in refreshed:
                    plan_.requires_human.append(
                        HumanItem(reason=f"lockfile not refreshed: {notice.message}", file=notice.file)
                    )
        finally:
            repo_copy.discard(paths.copy)
    if edited:
        _stale_locks(state, plan_)
    environments.install_target(state)
    return f"bumped {len(edited)} declaration(s); installed {state.task.sdk.name} {target}"


CHANGED_AFTER = "is not what its tool wrote (replaced, moved behind a link, or not UTF-8): not taken"


def _asked_off_target(state: RunState) -> None:
    """The bumped tree, read as the tests' install reads it, must ask for nothing on the SDK that
    excludes `to`. A pin the bump left where the install reads it (a substitution, a command, a file the
    finders did not take, a constraints file kept on purpose) would otherwise pass the tests here, which
    install exactly `to`, and leave a repository whose own install asks for both versions."""
    adapter, sdk = need(state.adapter), state.task.sdk
    if adapter.asked_for_by_tests is None:
        return
    versioning = adapter.versioning
    canonical = versioning.canonical_name(sdk.name)
    asked = adapter.asked_for_by_tests(state.paths.worktree, state.settings, canonical)
    off = []
    for where, text, written in asked:
        try:  # a URL or path (no range to read) may be any version: off target
            excluded = written is None or (
                versioning.has_version(written, "") and not versioning.matches(sdk.to, written, "")
            )
        except ValueError:
            excluded = True  # unreadable: it may well exclude it
        if excluded:
            off.append(f"{where}: {text}")
    if off:
        raise RequiresHuman(
            f"after the bump, the tests' install of this repository still asks for {sdk.name} off "
            f"{sdk.to}: {'; '.join(off)}"[:MR_ITEM_MAX_CHARS],
            hint="the bump does not edit it there: change it by hand, or name a constraints file in the "
            "task's sdk.also_bump; then run again",
        )


def _refreshed_text(state: RunState, notice: ArtifactNotice) -> str | None:
    """The bytes the lock tool wrote, read from the copy without following a link anywhere on the path
    (code that ran during the refresh could have swapped a folder for a link to a host file) and only if
    they hash to what the adapter saw when the tool exited; None otherwise."""
    fs = RootedFS(state.paths.copy, state.settings.budgets.max_lockfile_bytes)
    try:
        data = fs.read_bytes(notice.file)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if hashlib.sha256(data).hexdigest() == notice.sha256 else None


def _lock_changes(state: RunState, file: str, refreshed: str) -> None:
    """What the refresh of `file` changed besides the package (lock_changes.py), against its text at the
    base commit (none there: every entry counts as changed)."""
    try:
        before = read_blob(state.paths.worktree, state.base_commit, file).decode("utf-8", "replace")
    except GitError:
        before = ""
    adapter = need(state.adapter)
    changes = lock_changes.changed(adapter, state.task.sdk.name, before, refreshed)
    if changes.entries or changes.removed or changes.held:
        state.lock_changes[file] = changes
    was, now = adapter.lock_format(before), adapter.lock_format(refreshed)
    if before and now and was != now:  # older versions of its tool may warn or not read it fully
        state.manifest.lock_formats[file] = {"before": was or "none stated", "after": now}
    need(state.plan).requires_human.extend(
        HumanItem(
            reason=f"{file} locks {entry}, which no installer can be given: check the lockfile", file=file
        )
        for entry in changes.unreadable
    )


def _stale_locks(state: RunState, plan_: ChangePlan) -> None:
    """Every lock entry of the SDK that still locks another version after the bump is a human's job: a
    compiled requirements file to recompile, or a lockfile its tool refreshed to a version never tested.
    A lockfile already reported as not refreshed is named once."""
    adapter, sdk, root = need(state.adapter), state.task.sdk, state.paths.worktree
    profile = need(state.profile)
    reported = {h.file for h in plan_.requires_human if h.reason.startswith("lockfile not refreshed")}
    for d in stale_locks(sdk, adapter.extract_dependencies(root, profile.dependency_files, sdk.name)):
        if d.file in reported:
            continue
        plan_.requires_human.append(
            HumanItem(
                reason=f"{d.file} line {d.line} still locks {sdk.name} {d.specifier} after the bump to "
                f"{sdk.to}: refresh or recompile it with its own tool so that it locks exactly {sdk.to}",
                file=d.file,
                line=d.line,
            )
        )
    for d in stale_script_locks(sdk, profile.sdk_declarations):  # the bump does not edit these files
        plan_.requires_human.append(
            HumanItem(
                reason=f"{d.file} line {d.line} locks {sdk.name} {d.specifier}, in {d.section} below the "
                f"root that no dependency file reaches (compiled): recompile it with its own tool so that "
                f"it locks exactly {sdk.to}",
                file=d.file,
                line=d.line,
            )
        )


def apply_codemod(state: RunState) -> str:
    """The fixable rules, in order. Every edit is recorded with its rule (run.json `rule_edits`, the trace,
    the MR text); a refused write fails the run; a file a rule could not edit, or an edit that brings in
    import-time code or a risky API, is left to a human (plan.requires_human)."""
    report = codemod.apply_rules(state.rules, state.paths.worktree, need(state.workspace), state.scanner)
    state.manifest.rule_edits = report.edits
    for rule, files in report.by_rule().items():
        edits = [e for e in report.edits if e.rule == rule]
        state.trace.record(
            actor="codemod",
            tool="rule",
            arguments={"rule": rule, "files": files, "count": sum(e.count for e in edits)},
            result=f"changed by {rule} in {len(files)} file(s)"
            + "".join(f"; {e.file} adds {', '.join(e.adds)}" for e in edits if e.adds),
            decision="allowed",
        )
    for err in report.errors:
        state.notes.append(f"rule {err['rule']} could not edit {err['file']}: {err['error']}")
    need(state.plan).requires_human.extend([*codemod.error_items(report), *codemod.risk_items(report)])
    return f"{len(report.edits)} edit(s) in {len(report.files)} file(s), {len(report.errors)} error(s)"


def run_verification(state: RunState, phase: str) -> str:
    shadows = environments.shadowing(state)
    if shadows:  # the base had none (install_baseline): an edit made them
        raise CandidateRejected(
            f"{phase}: the candidate holds its own copy of what {state.task.sdk.name} installs, which the "
            f"tests may import in place of the installed version: {', '.join(shadows[:5])}",
            hint="a change that adds a module of the SDK's name is never verified against the SDK",
        )
    tested, changed = candidate_sha256_and_files(state.paths.worktree, state.base_commit)
    result = timed_tests(state, phase, changed)
    after = candidate_sha256(state.paths.worktree, state.base_commit)
    result.candidate_sha256 = tested if after == tested else None  # the tree changed: no proof
    if after != tested:
        state.notes.append(
            f"{phase}: the worktree changed during the test run; its result proves no candidate"
        )
    beside = baseline_run.join(state)  # the baseline's tests, where they ran beside this one
    state.verifications.append(result)
    distrust = untrusted(state, result)
    if distrust is not None:
        raise distrust
    if result.tampered:
        raise CandidateRejected(
            f"{phase}: the test run wrote files of the candidate: " + ", ".join(result.tampered[:5]),
            hint="a run that changes the code under test cannot be green, even if it restores the bytes",
        )
    said = f"{phase}: {'green' if result.passed else 'red'} (exit {result.exit_code})"
    return f"{said}; {beside}" if beside else said


def review(state: RunState, brain: Brain) -> str:
    state.candidate = freeze(state.paths.worktree, state.base_commit, state.paths.artifact("changes.patch"))
    findings = judge_candidate(state)
    # Imports of modules the target dropped are a human's items like the plan's, before the review and the
    # merge request read them (removed_imports.py; outcome.decide keeps such a run from succeeding)
    need(state.plan).requires_human += [HumanItem(reason=item) for item in removed_imports.items(state)]
    state.verdict = brain.review(state, findings)
    state.verdict.candidate_sha256 = state.candidate.sha256
    return f"{state.verdict.verdict} by {state.verdict.reviewer} for {state.candidate.sha256[:12]}"


def scribe(state: RunState, brain: Brain) -> str:
    state.draft = brain.scribe(state)
    return state.draft.title


def _find_skill(state: RunState) -> Any:
    """The migration skill the task names; None for a plain bump (a task without `migration:`)."""
    ref = state.task.migration
    if ref is None:
        return None
    skill = state.context.skill(ref.package, ref.skill) if state.context is not None else None
    if skill is None:
        raise RequiresHuman(
            f"no migration notes for {state.task.sdk.name}: skill {ref.skill!r} of package {ref.package!r} "
            "is not installed",
            hint="add the SDK owner's migration package to apm.yml and run apm install",
        )
    return skill
