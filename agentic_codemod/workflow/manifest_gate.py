"""Dependency files may change only as the deterministic bump changes them.

"No new dependencies" (ARCHITECTURE.md §5) is enforced without reading intentions: the expected content
of every dependency file is recomputed from the base commit by the adapter's own bump, and the candidate
must hold exactly that. Another dependency added to the SDK's line, a URL instead of a version, an extra
index, a re-pinned neighbour: each makes the file differ and fails the gate, whoever wrote it.

What counts as a dependency file is the adapter's one definition, never a list of this module's own:
every path `adapter.is_dependency_file` names (FILE_PATTERNS and LOCKFILES, at any depth), every file of
the base the adapter read at recon (`expected`), and every file the adapter would read in the candidate
(`adapter.read_dependency_files`, which follows `-r`/`-c` and setuptools `file:`). New, deleted,
renamed or symlinked dependency files fail; so does anything the adapter refuses in the candidate. A
lockfile may change only to the exact bytes its own tool wrote during the bump (`refreshed`).
"""

from __future__ import annotations

import difflib
import hashlib
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.types import Adapter
from agentic_codemod.models import Finding
from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow.gates import Change, GateResult


def manifest_gate(
    root: Path,
    changes: Sequence[Change],
    expected: Mapping[str, str],
    adapter: Adapter,
    *,
    refreshed: Mapping[str, str] | None = None,
    trace: Trace | None = None,
) -> GateResult:
    """`expected` maps every dependency file of the base to the content the bump gives it; `refreshed`
    maps each lockfile the bump's tool rewrote to the sha256 of what it wrote."""
    candidate = adapter.read_dependency_files(root)
    watched = set(expected) | set(candidate.files)
    findings = [
        _error(f"refused in the candidate: {refusal}", refusal.file, "manifest.refused")
        for refusal in candidate.refused
    ]
    for change in changes:
        paths = [p for p in (change.old_path, change.path) if p]
        if any(p in watched or adapter.is_dependency_file(p) for p in paths):
            problem = _problem(root, change, expected, refreshed or {}, adapter.lockfiles)
            if problem:
                findings.append(_error(problem, change.path, "manifest.changed"))
    result = GateResult(name="manifest", passed=not findings, findings=findings)
    if trace is not None:
        trace.record(
            actor="gate",
            tool="manifest_gate",
            arguments={"files": sorted(watched)},
            result="passed" if result.passed else f"{len(findings)} finding(s)",
            decision="allowed" if result.passed else "refused",
            reason="; ".join(f.message for f in findings[:5]),
        )
    return result


_VERB = {"A": "added", "D": "deleted", "R": "renamed", "M": "changed", "C": "copied", "T": "changed"}


def _problem(
    root: Path,
    change: Change,
    expected: Mapping[str, str],
    refreshed: Mapping[str, str],
    lockfiles: Sequence[str],
) -> str | None:
    """Why this change of a dependency file is not the bump's, or None when it is."""
    path = change.path
    verb = _VERB.get(change.status, "changed")
    if change.status in ("D", "R") or path not in expected:
        return f"dependency manifest {verb}: {change.old_path or path}"
    try:
        info = (root / path).lstat()
        if not stat.S_ISREG(info.st_mode):  # a symlink is never followed: it may lead out of the tree
            return f"dependency manifest {path} is no longer a regular file"
        data = (root / path).read_bytes()
    except OSError as exc:
        return f"dependency manifest {path} cannot be read: {exc.strerror}"
    if PurePosixPath(path).name in lockfiles or path in refreshed:  # a lockfile, or a recompiled file
        if refreshed.get(path) == hashlib.sha256(data).hexdigest():
            return None
        return f"lockfile {path} changed, but not to what its own tool wrote during the bump"
    current = data.decode("utf-8", errors="replace")
    if current == expected[path]:
        return None
    return f"{path} differs from the bump of the SDK alone: " + _first_difference(expected[path], current)


def _first_difference(expected: str, current: str) -> str:
    """The first line the candidate added (else the first it removed), for the finding."""
    diff = [
        line
        for line in difflib.unified_diff(expected.splitlines(), current.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    for line in sorted(diff, key=lambda d: d[0] != "+"):
        return f"{line[:1]} {line[1:].strip()[:120]}"
    return "whitespace or line endings"


def _error(message: str, path: str, code: str) -> Finding:
    return Finding(severity="error", message=message, path=path, code=code)
