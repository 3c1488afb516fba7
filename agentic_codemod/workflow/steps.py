"""The deterministic work of each workflow step. pipeline.py wires them into the agno Workflow;
the brain (rules or agents) is consulted only where the design says the model may act."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from agentic_codemod import experience
from agentic_codemod.errors import (
    BudgetExceeded,
    CandidateRejected,
    EnvironmentUnavailable,
    InputError,
    RequiresHuman,
)
from agentic_codemod.models import ChangePlan, Dependency, Finding, HumanItem, RepoProfile, VerificationResult
from agentic_codemod.tools.paths import allowed_by
from agentic_codemod.tools.snapshot import git
from agentic_codemod.workflow import codemod, verify
from agentic_codemod.workflow.brains import Brain
from agentic_codemod.workflow.candidate import candidate_sha256, freeze
from agentic_codemod.workflow.manifest_gate import manifest_gate
from agentic_codemod.workflow.state import RunState

if TYPE_CHECKING:
    from agentic_codemod.workflow.gates import GateResult

T = TypeVar("T")


def recon(state: RunState, brain: Brain) -> str:
    adapter, root = _need(state.adapter), state.paths.worktree
    files = adapter.find_dependency_files(root)
    declarations = adapter.extract_dependencies(root, files, state.task.sdk.name)
    state.test_command = adapter.detect_test_command(root)
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


def plan(state: RunState, brain: Brain) -> str:
    task, profile = state.task, _need(state.profile)
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
    rules_dir = state.skill.rules_dir
    state.rules = codemod.load_rules(rules_dir, task.migration.disabled_rules) if rules_dir else []
    draft.rule_matches = codemod.find_matches(state.rules, state.paths.worktree)
    relevant = [m for m in draft.rule_matches if _rule(state, m.rule_id).applies_to(target)]
    # Detect-only matches alone do not make work on a repository that is already migrated: they flag a
    # construct, not a break. They still become requires_human items of any run that does work.
    if not pending and not any(m.fixable for m in relevant):
        draft.nothing_to_do = True
        draft.reason = (
            f"every declaration of {task.sdk.name} already excludes {task.sdk.from_range} and admits "
            f"{target}, and no migration rule would change the code"
            if profile.sdk_declarations
            else f"the repository neither declares {task.sdk.name} nor has code a migration rule would change"
        )
        return draft.reason
    if not profile.sdk_declarations:
        raise RequiresHuman(
            f"the code matches {len(relevant)} migration rule(s) "
            f"but no supported file declares {task.sdk.name}",
            hint=f"declare it in one of: {', '.join(_need(state.adapter).file_patterns)}",
        )
    outside = sorted({d.file for d in pending if not allowed_by(d.file, task.allowed_paths)})
    if outside:
        raise InputError(
            f"task allowed_paths {task.allowed_paths} exclude the dependency file(s) to bump: "
            + ", ".join(outside),
            hint="add them to allowed_paths in the task file",
        )
    draft.requires_human = codemod.human_items(draft.rule_matches, state.rules, target)
    experience.use_lessons(state, draft, state.settings.experience_budget_bytes)  # hypotheses, never gates
    draft.steps = [
        *(f"bump {d.name} {d.specifier} -> {target} in {d.file}" for d in pending),
        *(f"apply rule {r.id}: {r.description}" for r in state.rules if r.fixable),
        f"verify with {' '.join(profile.test_command or ['(no test command)'])}",
    ]
    state.plan = brain.plan(state, draft)
    return f"{len(pending)} declaration(s) to bump, {len(draft.rule_matches)} rule match(es)"


def timed_tests(state: RunState, phase: str) -> VerificationResult:
    """One run of the fixed test command, charged to the run's verification time budget."""
    budgets = state.settings.budgets
    left = budgets.max_verification_total_s - state.verification_s
    if left <= 0:
        raise BudgetExceeded(
            "max_verification_total_s", budgets.max_verification_total_s, round(state.verification_s)
        )
    result = verify.run_tests(
        _need(state.test_command),
        python=_need(state.env).python,
        cwd=state.paths.worktree,
        runner=_need(state.runner),
        timeout_s=min(budgets.verification_timeout_s, left),
        phase=phase,
        reports_dir=state.paths.reports,
    )
    state.verification_s += result.duration_s
    return result


def pending_declarations(state: RunState) -> list[Dependency]:
    """Declarations to bump: those that exclude the target, or still admit the old range."""
    sdk = state.task.sdk
    old = SpecifierSet(sdk.from_range, prereleases=True)
    return [
        d
        for d in _need(state.profile).sdk_declarations
        if sdk.to not in SpecifierSet(d.specifier, prereleases=True)
        or overlaps(SpecifierSet(d.specifier, prereleases=True), old)
    ]


def overlaps(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Whether two ranges share a version, probed at every version either one names (and just above it).
    Exact for the ranges declarations use (pins, bounds, compatible releases)."""
    probes: set[Version] = set()
    for spec in [*a, *b]:
        try:
            v = Version(spec.version.rstrip(".*"))
        except InvalidVersion:
            continue
        probes |= {v, Version(f"{v.base_version}.post1"), Version(f"{v.base_version}.1")}
    return any(v in a and v in b for v in probes)


def _expected_manifests(state: RunState) -> dict[str, str]:
    """Every dependency file as the deterministic bump alone makes it, from the base commit."""
    adapter, base, target = _need(state.adapter), state.base_commit, state.task.sdk.to
    pending = pending_declarations(state)
    expected: dict[str, str] = {}
    for path in _need(state.profile).dependency_files:
        text = git(state.paths.worktree, "show", f"{base}:{path}").decode("utf-8", "replace")
        for dep in (d for d in pending if d.file == path):
            text = adapter.update_dependency(text, dep, target)
        expected[path] = text
    return expected


def _rule(state: RunState, rule_id: str) -> codemod.Rule:
    return next(r for r in state.rules if r.id == rule_id)


def baseline(state: RunState) -> str:
    adapter, command = _need(state.adapter), state.test_command
    if command is None:
        raise RequiresHuman(
            "no test command found: without verification nothing may be published",
            hint="add a tests/ folder or a pytest configuration to the repository",
        )
    state.env = adapter.prepare_environment(
        state.paths.worktree, state.paths.env_dir, state.settings, _need(state.runner)
    )
    failed = [r for r in state.env.install_log if not r.ok]
    if failed:
        raise RequiresHuman(
            "cannot install the repository's dependencies for verification",
            hint=failed[-1].output_tail[-400:].strip(),
        )
    state.baseline = timed_tests(state, "baseline")
    state.verifications.append(state.baseline)
    if not verify.usable_baseline(state.baseline):
        raise RequiresHuman(
            f"the test command does not work (exit {state.baseline.exit_code}): "
            f"{' '.join(state.baseline.command)}",
            hint="fix the repository's test set-up; verification is required to publish",
        )
    counts = state.baseline.tests
    return f"baseline: exit {state.baseline.exit_code}, " + (
        f"{counts.passed} passed, {counts.failed + counts.errors} failing" if counts else "no counts"
    )


def bump(state: RunState) -> str:
    adapter, ws, target = _need(state.adapter), _need(state.workspace), state.task.sdk.to
    plan_ = _need(state.plan)
    bumped = 0
    for dep in pending_declarations(state):
        content = ws.read(dep.file, actor="bump")
        ws.write(dep.file, adapter.update_dependency(content, dep, target), actor="bump")
        bumped += 1
        for notice in adapter.update_lockfiles(state.paths.worktree, dep, target, _need(state.runner)) or []:
            state.trace.record(
                actor="bump",
                tool="update_lockfile",
                arguments={"file": notice.file},
                result=notice.message or "updated",
                decision="allowed",
            )
            if not notice.updated:
                plan_.requires_human.append(
                    HumanItem(reason=f"lockfile not refreshed: {notice.message}", file=notice.file)
                )
    install = adapter.install_dependencies(
        state.paths.worktree, _need(state.env), state.settings, _need(state.runner)
    )
    state.trace.record(
        actor="bump",
        tool="install_dependencies",
        arguments={"argv": install.argv},
        result=f"exit {install.exit_code}",
        decision="allowed",
    )
    if not install.ok:
        raise CandidateRejected(
            f"installing {state.task.sdk.name} {target} failed (exit {install.exit_code})",
            hint=install.output_tail[-400:].strip(),
        )
    return f"bumped {bumped} declaration(s); installed {state.task.sdk.name} {target}"


def apply_codemod(state: RunState) -> str:
    report = codemod.apply_rules(state.rules, state.paths.worktree, _need(state.workspace))
    for err in report.errors:
        state.notes.append(f"rule {err['rule']} could not edit {err['file']}: {err['error']}")
    return f"{len(report.edits)} edit(s) in {len(report.files)} file(s), {len(report.errors)} error(s)"


def run_verification(state: RunState, phase: str) -> str:
    tested = candidate_sha256(state.paths.worktree, state.base_commit)
    result = timed_tests(state, phase)
    after = candidate_sha256(state.paths.worktree, state.base_commit)
    result.candidate_sha256 = tested if after == tested else None  # the tests changed the tree: no proof
    if after != tested:
        state.notes.append(f"{phase}: the test run changed the worktree; its result proves no candidate")
    state.verifications.append(result)
    return f"{phase}: {'green' if result.passed else 'red'} (exit {result.exit_code})"


def review(state: RunState, brain: Brain) -> str:
    from agentic_codemod.workflow import gates

    state.candidate = freeze(state.paths.worktree, state.base_commit, state.paths.artifact("changes.patch"))
    findings: list[Finding] = []
    changes = gates.changed_paths(state.paths.worktree, state.base_commit)
    for result in (
        gates.scope_gate(changes, state.task.allowed_paths, state.settings.deny_globs, trace=state.trace),
        gates.test_tamper_check(state.paths.worktree, state.base_commit, changes, trace=state.trace),
        manifest_gate(
            state.paths.worktree,
            changes,
            _expected_manifests(state),
            lockfiles=_need(state.adapter).lockfiles,
            trace=state.trace,
        ),
        _test_count_gate(state),
        _evidence_gate(state),
    ):
        record = {**result.to_dict(), "candidate_sha256": state.candidate.sha256}
        state.gates.append(record)
        findings.extend(result.findings)
    findings.extend(_semantic_gate(state))
    state.verdict = brain.review(state, findings)
    state.verdict.candidate_sha256 = state.candidate.sha256
    return f"{state.verdict.verdict} by {state.verdict.reviewer} for {state.candidate.sha256[:12]}"


def scribe(state: RunState, brain: Brain) -> str:
    state.draft = brain.scribe(state)
    return state.draft.title


def _test_count_gate(state: RunState) -> GateResult:
    """Fewer tests passing+failing than at baseline means tests went missing."""
    from agentic_codemod.workflow.gates import GateResult

    before, after = state.baseline, state.last_verification
    findings: list[Finding] = []
    if before and after and before.tests and after.tests:
        n_before = before.tests.passed + before.tests.failed + before.tests.errors
        n_after = after.tests.passed + after.tests.failed + after.tests.errors
        if n_after < n_before * state.settings.min_test_count_ratio:
            findings.append(
                Finding(
                    severity="error",
                    message=f"tests ran {n_after} after the change but {n_before} at baseline",
                )
            )
    return GateResult(name="test_count", passed=not findings, findings=findings)


def _semantic_gate(state: RunState) -> list[Finding]:
    """Jev judges scope drift when configured. `required`: only a pass lets the candidate through, and an
    unreachable service pauses the run (75). `advisory`: recorded, never blocking."""
    settings = state.settings.gates.semantic
    if settings.mode == "off":
        return []
    from agentic_codemod import semantic
    from agentic_codemod.workflow.artifacts import write_json

    m = state.manifest
    m.candidate, m.verifications, m.base_commit = state.candidate, state.verifications, state.base_commit
    write_json(state.paths.artifact("run.json"), m)  # the gate reads the evidence from the run dir
    verdict = semantic.evaluate(state.paths.run_dir, settings)
    if settings.mode == "advisory":
        state.notes.append(f"semantic gate (advisory): {verdict.outcome}: {verdict.reason}")
        return []
    state.gates.append(verdict.gate_record())
    if verdict.outcome == "unavailable":
        raise EnvironmentUnavailable(
            f"semantic gate unavailable: {verdict.reason}",
            hint="the run pauses; retry when the service is reachable",
        )
    if verdict.passed:
        return []
    return [Finding(severity="error", message=f"semantic gate: {verdict.outcome}: {verdict.reason}")]


def _evidence_gate(state: RunState) -> GateResult:
    """The last verification must have tested exactly this candidate, and every file an actor wrote
    must be in it (a written file hidden by .gitignore would otherwise escape review)."""
    from agentic_codemod.workflow.gates import GateResult

    cand, last, ws = _need(state.candidate), state.last_verification, state.workspace
    findings: list[Finding] = []
    if last is None or last.candidate_sha256 != cand.sha256:
        proved = last.candidate_sha256[:12] if last and last.candidate_sha256 else "-"
        findings.append(
            Finding(
                severity="error",
                message=f"the last verification tested candidate {proved}, not {cand.sha256[:12]}",
            )
        )
    for path in sorted((ws.changed_files if ws else set()) - set(cand.files)):
        findings.append(
            Finding(severity="error", message=f"written but not in the candidate: {path}", path=path)
        )
    return GateResult(name="evidence", passed=not findings, findings=findings)


def _find_skill(state: RunState) -> Any:
    ref = state.task.migration
    skill = state.context.skill(ref.package, ref.skill) if state.context is not None else None
    if skill is None:
        raise RequiresHuman(
            f"no migration notes for {state.task.sdk.name}: skill {ref.skill!r} of package {ref.package!r} "
            "is not installed",
            hint="add the SDK owner's migration package to apm.yml and run apm install",
        )
    return skill


def _need(value: T | None) -> T:
    if value is None:
        raise InputError("internal: a step ran before the step that prepares its input")
    return value
