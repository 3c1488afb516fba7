"""Publish proves, not trusts (ARCHITECTURE.md §5): the deterministic gates re-derived from base + patch.

    prove(work, candidate, tree) -> None        raises PublishRefused naming every failed gate and path

`work` is publish's own scratch repository holding the base commit, and `tree` the tree that
`git apply --cached changes.patch` made of it. Nothing of the run directory is trusted beyond the task it
recorded (validated again, with the default deny globs always added): the patch must be exactly the diff
of base..tree as the tool makes it (its sha256 is the approved one), and the scope and deny list, the
tamper check, the manifest gate and the patch-text gate are run again on the candidate's files, exported
byte for byte from the tree (no checkout, so no attribute or filter of the repository is involved).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from agentic_codemod.adapters import get_adapter
from agentic_codemod.adapters.types import Adapter, refreshed_sha256
from agentic_codemod.publish.check import ApprovedCandidate, PublishRefused
from agentic_codemod.task import TaskSpec
from agentic_codemod.tools.safe_git import Scratch, git_dir, objects_dir
from agentic_codemod.tools.snapshot import export_tree
from agentic_codemod.workflow import gates
from agentic_codemod.workflow.candidate import PATCH_ARGS
from agentic_codemod.workflow.declarations import pending
from agentic_codemod.workflow.gates import GateResult
from agentic_codemod.workflow.manifest_gate import manifest_gate
from agentic_codemod.workflow.patch_gate import patch_text_gate


def prove(work: Path, c: ApprovedCandidate, tree: str) -> None:
    with Scratch(objects_dir(work)) as s:
        patch = s.git("diff", "--no-ext-diff", "--no-textconv", *PATCH_ARGS, c.base_commit, tree, "--")
        raw = s.git("diff", "--no-ext-diff", *gates.RAW_DIFF_ARGS, c.base_commit, tree, "--")
    problems = []
    if hashlib.sha256(patch).hexdigest() != c.sha256:
        problems.append("base + changes.patch does not reproduce the approved candidate")
    changes = gates.parse_raw_diff(raw)
    with tempfile.TemporaryDirectory(prefix="codemod-prove-") as tmp:
        base_dir, cand_dir = Path(tmp) / "base", Path(tmp) / "candidate"
        for tree_ish, dest in ((c.base_commit, base_dir), (tree, cand_dir)):
            export_tree(work, tree_ish, dest)
            (dest / ".git").write_text(f"gitdir: {git_dir(work)}\n")  # the objects, for base reads
        adapter = get_adapter(c.task.sdk.ecosystem)
        results = [
            gates.scope_gate(changes, c.task.allowed_paths, c.task.deny_globs),
            gates.test_tamper_check(cand_dir, c.base_commit, changes, facts=adapter.test_facts),
            manifest_gate(
                cand_dir,
                changes,
                expected_manifests(base_dir, c.task, adapter),
                adapter,
                refreshed=refreshed_lockfiles(c.run_dir / "trace.jsonl"),
            ),
            patch_text_gate(c.patch.read_bytes(), cand_dir, c.base_commit),
        ]
    problems += [_problem(r, f.message) for r in results for f in r.findings if f.severity == "error"]
    if problems:
        raise PublishRefused(c.run_dir, problems)


def expected_manifests(base_dir: Path, task: TaskSpec, adapter: Adapter) -> dict[str, str]:
    """Every dependency file of the base as the deterministic bump alone makes it (as the run did)."""
    files = adapter.find_dependency_files(base_dir)
    bump = pending(task.sdk, adapter.extract_dependencies(base_dir, files, task.sdk.name))
    expected: dict[str, str] = {}
    for path in files:
        text = (base_dir / path).read_text(encoding="utf-8", errors="replace")
        for dep in (d for d in bump if d.file == path):
            text = adapter.update_dependency(text, dep, task.sdk.to)
        expected[path] = text
    return expected


def refreshed_lockfiles(trace: Path) -> dict[str, str]:
    """Lockfile -> sha256 of what its own tool wrote during the bump, as the run's trace recorded it. The
    one thing publish takes from the run beyond the task: it cannot run the ecosystem's tool again, and a
    lockfile still needs the task to name it (deny list) before any change to it passes the scope gate."""
    refreshed: dict[str, str] = {}
    try:
        lines = trace.read_text(encoding="utf-8").split("\n")  # JSON Lines: "\n" only (see Trace.lines)
    except (OSError, UnicodeDecodeError):
        return refreshed
    for raw in lines:
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict) or (line.get("actor"), line.get("tool")) != ("bump", "update_lockfile"):
            continue
        digest, file = (
            refreshed_sha256(str(line.get("result", ""))),
            (line.get("arguments") or {}).get("file"),
        )
        if digest and isinstance(file, str):
            refreshed[file] = digest
    return refreshed


def _problem(result: GateResult, message: str) -> str:
    return f"re-derived gate {result.name} failed: {message}"
