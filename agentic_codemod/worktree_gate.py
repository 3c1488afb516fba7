"""The deterministic gates (and the semantic gate when asked) on a live git worktree, for orchestrators.

    check_worktree(request) -> WorktreeVerdict

An orchestrator such as bmad-loop lets its own coding agent edit a worktree and asks, just before it
commits, whether the change may enter. This module answers with the gates a run uses, reused as they
are (workflow/gates.py with the adapter's TestFacts.tamper, manifest_gate.py, patch_gate.py,
publish_gates.expected_manifests) on the worktree against a base commit (default HEAD: the uncommitted
change, new untracked files included):

    scope        every changed path inside the allowed paths, none in the deny globs (DEFAULT_DENY_GLOBS
                 always added), no symlink, no submodule change, no new conftest.py the scope does not name
    test_tamper  no deleted/emptied tests, no new skip markers, no fewer asserts, no new runner wiring
    manifest     dependency files only as the task's deterministic SDK bump makes them (without a task
                 SDK: not at all); a lockfile may not change (this gate cannot rerun the ecosystem's tool)
    patch_text   no binary hunk hiding the lines of a text file
    semantic     Jev on the frozen diff, when the mode is advisory or required (semantic/)

Outcomes: "pass" (exit 0), "rejected" (1: a gate failed; the reasons name the paths), "unavailable" (75,
or the mapped code: the semantic service could not be reached). Nothing in the worktree is written.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentic_codemod.adapters import get_adapter, registry
from agentic_codemod.adapters.types import Adapter
from agentic_codemod.errors import EXIT_OK, EXIT_REJECTED, EXIT_UNAVAILABLE
from agentic_codemod.models import Finding
from agentic_codemod.semantic.settings import SemanticSettings
from agentic_codemod.task import SdkSpec
from agentic_codemod.tools.process_group import stop_group
from agentic_codemod.tools.snapshot import export_tree, resolve_base, snapshot_diff
from agentic_codemod.workflow import gates
from agentic_codemod.workflow.candidate import PATCH_ARGS
from agentic_codemod.workflow.gates import GateResult
from agentic_codemod.workflow.manifest_gate import manifest_gate
from agentic_codemod.workflow.patch_gate import patch_text_gate

Outcome = Literal["pass", "rejected", "unavailable"]
# At most this many reasons are joined into the one-line summary (all of them are in the verdict file).
MAX_REASONS = 5
# Bytes of the verification output kept as evidence for the semantic gate.
VERIFY_TAIL_BYTES = 8_000


@dataclass(frozen=True)
class Scope:
    """What the change may touch: from a task file, a BMAD story or plain settings."""

    task_id: str
    allowed_paths: list[str]
    deny_globs: list[str] = field(default_factory=list)
    acceptance_criteria: list[str] = field(default_factory=list)
    sdk: SdkSpec | None = None
    source: str = ""  # the file the scope came from (never allowed to change in the candidate)


@dataclass(frozen=True)
class Request:
    worktree: Path
    scope: Scope
    base: str = "HEAD"
    semantic: SemanticSettings = field(default_factory=SemanticSettings)
    verify_cmd: str = ""  # shell command whose real result is the semantic gate's evidence
    verify_timeout_s: float = 600.0
    run_dir: Path | None = None  # where changes.patch, run.json and semantic.json go (else a temp dir)


@dataclass
class WorktreeVerdict:
    outcome: Outcome
    exit_code: int
    reasons: list[str]
    gates: list[dict[str, object]]
    candidate_sha256: str = ""
    base_commit: str = ""

    @property
    def summary(self) -> str:
        shown = self.reasons[:MAX_REASONS]
        more = len(self.reasons) - len(shown)
        return "; ".join(shown) + (f" (and {more} more)" if more > 0 else "")

    def to_dict(self) -> dict[str, object]:
        return {
            "format": "agentic-codemod/worktree-gate@1",
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "reasons": self.reasons,
            "gates": self.gates,
            "candidate_sha256": self.candidate_sha256,
            "base_commit": self.base_commit,
        }


def check_worktree(request: Request, env: Mapping[str, str] = os.environ) -> WorktreeVerdict:
    """Run every deterministic gate; the semantic gate only when they all pass and its mode asks."""
    root = request.worktree
    base = resolve_base(root, request.base)
    changes = gates.changed_paths(root, base)
    patch = snapshot_diff(root, base, *PATCH_ARGS)
    sha = hashlib.sha256(patch).hexdigest()
    results = _deterministic(root, base, changes, patch, request.scope)
    reasons = [f"{r.name}: {f.message}" for r in results for f in r.findings if f.severity == "error"]
    records: list[dict[str, object]] = [{"name": r.name, "passed": r.passed} for r in results]
    if reasons:
        return WorktreeVerdict("rejected", EXIT_REJECTED, reasons, records, sha, base)
    if request.semantic.mode == "off" or not changes:
        return WorktreeVerdict("pass", EXIT_OK, [], records, sha, base)
    return _semantic(request, base, patch, sha, records, env)


def _deterministic(
    root: Path, base: str, changes: list[gates.Change], patch: bytes, scope: Scope
) -> list[GateResult]:
    # Without an SDK nobody says which ecosystem the worktree is: every adapter's tamper facts and manifest
    # gate apply (a polyglot or unknown repository gets the strictest reading, never the Python one alone).
    adapters = [get_adapter(scope.sdk.ecosystem)] if scope.sdk else list(registry().values())
    results = [
        gates.scope_gate(changes, scope.allowed_paths, scope.deny_globs),
        _merged([gates.test_tamper_check(root, base, changes, facts=a.test_facts) for a in adapters]),
    ]
    source = _inside(root, scope.source)
    if source and any(source in (c.path, c.old_path) for c in changes) and not source.endswith(".md"):
        # a task file steers this gate; a BMAD story may change (its dev agent records progress in it),
        # because its scope is read from the base commit, never from the worktree
        message = f"the gate's own task file changed: {source}"
        results[0].passed = False
        changed = Finding(severity="error", message=message, path=source, code="scope.task_file_changed")
        results[0].findings.append(changed)
    with tempfile.TemporaryDirectory(prefix="codemod-worktree-gate-") as tmp:
        base_dir = Path(tmp) / "base"
        export_tree(root, base, base_dir)
        results.append(
            _merged([manifest_gate(root, changes, _expected(base_dir, scope, a), a) for a in adapters])
        )
    results.append(patch_text_gate(patch, root, base))
    return results


def _merged(results: list[GateResult]) -> GateResult:
    """One gate's results under several adapters: it passes only where each passed; findings once each."""
    findings = {(f.code, f.path, f.message): f for r in results for f in r.findings}
    return GateResult(
        name=results[0].name, passed=all(r.passed for r in results), findings=list(findings.values())
    )


def _expected(base_dir: Path, scope: Scope, adapter: Adapter) -> dict[str, str]:
    """Every dependency file of the base as the deterministic bump alone makes it (unchanged: no SDK)."""
    from agentic_codemod.workflow.declarations import pending

    files = adapter.find_dependency_files(base_dir)
    sdk = scope.sdk
    bump = pending(sdk, adapter.extract_dependencies(base_dir, files, sdk.name)) if sdk else []
    expected: dict[str, str] = {}
    for path in files:
        text = (base_dir / path).read_text(encoding="utf-8", errors="replace")
        for dep in (d for d in bump if d.file == path):
            text = adapter.update_dependency(text, dep, sdk.to)  # type: ignore[union-attr]
        expected[path] = text
    return expected


def _semantic(
    request: Request,
    base: str,
    patch: bytes,
    sha: str,
    records: list[dict[str, object]],
    env: Mapping[str, str],
) -> WorktreeVerdict:
    from agentic_codemod.semantic.gate import enforced_exit_code, evaluate

    with tempfile.TemporaryDirectory(prefix="codemod-semantic-") as tmp:
        run_dir = request.run_dir or Path(tmp)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "changes.patch").write_bytes(patch)
        verifications = [run_verify(request.verify_cmd, request.worktree, request.verify_timeout_s)]
        run = {
            "task": {"id": request.scope.task_id, "acceptance_criteria": request.scope.acceptance_criteria},
            "verifications": [v for v in verifications if v],
            "candidate": {"sha256": sha, "base_commit": base},
        }
        (run_dir / "run.json").write_text(json.dumps(run, indent=2) + "\n", encoding="utf-8")
        verdict = evaluate(run_dir, request.semantic, env)
    records.append({"name": "semantic", "passed": verdict.passed, "outcome": verdict.outcome})
    code = enforced_exit_code(verdict, request.semantic)
    reason = f"semantic ({request.semantic.mode}): {verdict.reason}"
    if not request.verify_cmd and verdict.outcome == "violation":
        reason += " (set verify_cmd: the semantic gate judges a diff only with a real test result)"
    if code == EXIT_OK:
        return WorktreeVerdict("pass", EXIT_OK, [] if verdict.passed else [reason], records, sha, base)
    if verdict.outcome == "unavailable":
        return WorktreeVerdict("unavailable", code, [reason], records, sha, base)
    return WorktreeVerdict("rejected", EXIT_REJECTED, [reason], records, sha, base)


def run_verify(command: str, cwd: Path, timeout_s: float) -> dict[str, object] | None:
    """Run the configured verification once, for real; its process group is killed on the time limit."""
    if not command:
        return None
    proc = subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        stop_group(proc)
        out, _ = proc.communicate()
        code = None
    tail = out[-VERIFY_TAIL_BYTES:].decode("utf-8", "replace")
    return {
        "phase": "verify",
        "command": command,
        "exit_code": code,
        "passed": code == 0,
        "output_tail": tail,
    }


def _inside(root: Path, source: str) -> str | None:
    """`source` as a path relative to the worktree, when it lies inside it."""
    if not source:
        return None
    try:
        return Path(source).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


__all__ = ["EXIT_UNAVAILABLE", "Request", "Scope", "WorktreeVerdict", "check_worktree", "run_verify"]
