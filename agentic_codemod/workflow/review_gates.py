"""The checks between a frozen candidate and its review: deterministic gates first, the optional
semantic gate last. Every result is recorded in run.json bound to the candidate's sha256."""

from __future__ import annotations

from agentic_codemod.adapters.types import refreshed_sha256
from agentic_codemod.config import LOST_TEST_ID_CHARS, LOST_TESTS_NAMED
from agentic_codemod.errors import EnvironmentUnavailable
from agentic_codemod.models import Finding
from agentic_codemod.tools.junit import case_statuses, lost_passes
from agentic_codemod.tools.snapshot import GitError, read_blobs
from agentic_codemod.workflow import gates, rule_risk
from agentic_codemod.workflow.declarations import pending_declarations
from agentic_codemod.workflow.gates import GateResult
from agentic_codemod.workflow.manifest_gate import manifest_gate
from agentic_codemod.workflow.patch_gate import patch_text_gate
from agentic_codemod.workflow.state import RunState, need


def judge_candidate(state: RunState) -> list[Finding]:
    """Run every gate on the frozen candidate; return their findings (errors fail the candidate)."""
    cand = need(state.candidate)
    changes = gates.changed_paths(state.paths.worktree, state.base_commit)
    findings: list[Finding] = []
    for result in (
        gates.scope_gate(changes, state.task.allowed_paths, state.settings.deny_globs, trace=state.trace),
        gates.test_tamper_check(
            state.paths.worktree,
            state.base_commit,
            changes,
            trace=state.trace,
            facts=need(state.adapter).test_facts,
            command=state.test_command,
        ),
        manifest_gate(
            state.paths.worktree,
            changes,
            _expected_manifests(state),
            need(state.adapter),
            refreshed=_refreshed_lockfiles(state),
            trace=state.trace,
        ),
        test_count_gate(state),
        kept_passing_gate(state),
        _evidence_gate(state),
        patch_text_gate(
            state.paths.artifact("changes.patch").read_bytes(), state.paths.worktree, state.base_commit
        ),
        rule_risk.provenance_gate(state.manifest.rule_edits),  # what each rule edit brings in
    ):
        state.gates.append({**result.to_dict(), "candidate_sha256": cand.sha256})
        findings.extend(result.findings)
    return findings + _semantic_gate(state)


def _expected_manifests(state: RunState) -> dict[str, str]:
    """Every dependency file as the deterministic bump alone makes it, from the base commit. The files
    are the adapter's one list, as recon found them in the base (find_dependency_files: patterns,
    lockfiles and what they include); lockfiles keep their base text (see _refreshed_lockfiles)."""
    adapter, base, target = need(state.adapter), state.base_commit, state.task.sdk.to
    pending = pending_declarations(state)
    expected: dict[str, str] = {}
    files = need(state.profile).dependency_files
    stored = read_blobs(state.paths.worktree, base, files)  # one git process for all of them
    for path in files:
        if path not in stored:
            raise GitError(f"{path}: not a file in the base commit {base}, where recon found it")
        text = stored[path].decode("utf-8", "replace")
        for dep in (d for d in pending if d.file == path):
            text = adapter.update_dependency(text, dep, target)
        expected[path] = text
    return expected


def _refreshed_lockfiles(state: RunState) -> dict[str, str]:
    """Lockfile -> sha256 of the bytes its own tool wrote during the bump, from the bump's trace lines."""
    refreshed: dict[str, str] = {}
    for line in state.trace.lines():
        if line.get("actor") == "bump" and line.get("tool") == "update_lockfile":
            digest = refreshed_sha256(str(line.get("result", "")))
            file = line.get("arguments", {}).get("file")
            if digest and isinstance(file, str):
                refreshed[file] = digest
    return refreshed


def test_count_gate(state: RunState) -> GateResult:
    """Fewer tests passing+failing than at baseline means tests went missing."""
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
                    code="test_count.fewer",
                )
            )
    return GateResult(name="test_count", passed=not findings, findings=findings)


def kept_passing_gate(state: RunState) -> GateResult:
    """Every test that passed at baseline passes after the change, by id (the JUnit reports the run kept,
    reports/junit-<phase>.xml, the canary cut out): one skipped after the change, or gone from its
    report, proves nothing about what it checked, even where as many tests ran (a test skipped at
    baseline running instead), which the count gate cannot see. A phase whose report cannot be read
    beside one that can is a finding (test_ids.unread): which tests passed at baseline, or whether they
    pass after, is not shown. So are both, for a runner that gives each test's outcome in every run
    (TestFacts.reports_each_test: every runner of both adapters; jest's JSON, TAP, unittest's `-v` lines,
    stestr's subunit and trial's result lines written as JUnit by TestFacts.case_report); a runner of an
    ecosystem without such a report has the count gate only. A verify-only run (nothing edited, so no
    candidate to review) asks both gates before it calls the target verified
    (pipeline._verified_on_target)."""
    before, after = state.baseline, state.last_verification
    findings: list[Finding] = []
    if before is not None and after is not None and after is not before:
        had = case_statuses(state.paths.reports / f"junit-{before.phase}.xml")
        has = case_statuses(state.paths.reports / f"junit-{after.phase}.xml")
        unread = _unread_phases(
            state, before.phase if had is None else None, after.phase if has is None else None
        )
        if unread:
            findings.append(
                Finding(
                    severity="error",
                    message=f"the {unread} left no readable test report, so the tests that passed at "
                    "baseline are not shown to pass after the change",
                    code="test_ids.unread",
                )
            )
        elif had is not None and has is not None:
            findings += _lost(state, after.phase, had, has)
    return GateResult(name="test_ids", passed=not findings, findings=findings)


def _unread_phases(state: RunState, before: str | None, after: str | None) -> str:
    """What to name when a phase's per-test report is unread ("" when nothing is missing that should be
    there): one beside a readable one always; both only where the command always gives one."""
    if before is not None and after is not None:
        facts = state.adapter.test_facts if state.adapter is not None else None
        said = facts.reports_each_test if facts is not None else None
        expected = said is not None and state.test_command is not None and said(state.test_command)
        return f"{before} and {after} runs" if expected else ""
    missing = before or after
    return f"{missing} run" if missing else ""


def _lost(state: RunState, phase: str, had: dict[str, str], has: dict[str, str]) -> list[Finding]:
    lost, respelled = lost_passes(had, has)
    note = (
        f"test_ids: {respelled} test id(s) of the baseline are in the {phase} report "
        "under the duplicate-parameter suffix of another pytest version, and passed there"
    )
    if respelled and note not in state.notes:
        state.notes.append(note)
    if not lost:
        return []
    named = ", ".join(
        f"{t[:LOST_TEST_ID_CHARS]}{'…' if len(t) > LOST_TEST_ID_CHARS else ''} ({s})"
        for t, s in lost[:LOST_TESTS_NAMED]
    )
    more = f" and {len(lost) - LOST_TESTS_NAMED} more" if len(lost) > LOST_TESTS_NAMED else ""
    return [
        Finding(
            severity="error",
            message=f"{len(lost)} test(s) that passed at baseline did not run after the change: "
            f"{named}{more}",
            code="test_ids.lost",
        )
    ]


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
    message = f"semantic gate: {verdict.outcome}: {verdict.reason}"
    return [Finding(severity="error", message=message, code=f"semantic.{verdict.outcome}")]


def _evidence_gate(state: RunState) -> GateResult:
    """The last verification must have tested exactly this candidate, and every file an actor wrote
    must be in it (a written file hidden by .gitignore would otherwise escape review)."""
    cand, last, ws = need(state.candidate), state.last_verification, state.workspace
    findings: list[Finding] = []
    if last is None or last.candidate_sha256 != cand.sha256:
        proved = last.candidate_sha256[:12] if last and last.candidate_sha256 else "-"
        findings.append(
            Finding(
                severity="error",
                message=f"the last verification tested candidate {proved}, not {cand.sha256[:12]}",
                code="evidence.other_candidate",
            )
        )
    for path in sorted((ws.changed_files if ws else set()) - set(cand.files)):
        findings.append(
            Finding(
                severity="error",
                message=f"written but not in the candidate: {path}",
                path=path,
                code="evidence.unlisted_write",
            )
        )
    return GateResult(name="evidence", passed=not findings, findings=findings)
