"""Dependency manifests may change only where the task's SDK is declared.

An actor that adds, removes or re-pins another dependency ("no new dependencies", ARCHITECTURE.md §5)
is caught here, deterministically: every added or removed line of a dependency file must mention the
SDK (by its normalised name). Lockfiles are left to the ecosystem's own tool and are not line-checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from packaging.utils import canonicalize_name

from agentic_codemod.models import Finding
from agentic_codemod.tools.snapshot import snapshot_diff
from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow.gates import Change, GateResult


def name_pattern(sdk: str) -> re.Pattern[str]:
    """`acme-sdk` also matches `acme_sdk`, `Acme.SDK` (PEP 503 normalisation)."""
    parts = re.split(r"[-_.]+", canonicalize_name(sdk))
    return re.compile(r"[-_.]+".join(re.escape(p) for p in parts), re.IGNORECASE)


def manifest_gate(
    root: Path,
    base_commit: str,
    changes: Sequence[Change],
    dependency_files: Sequence[str],
    sdk: str,
    *,
    lockfiles: Sequence[str] = (),
    trace: Trace | None = None,
) -> GateResult:
    pattern = name_pattern(sdk)
    watched = set(dependency_files)
    findings: list[Finding] = []
    for change in changes:
        path = change.path
        if Path(path).name in lockfiles:
            continue
        if path not in watched and change.old_path not in watched:
            if change.status == "A" and _looks_like_manifest(path):
                findings.append(_error(f"new dependency manifest: {path}", path))
            continue
        if change.status == "D":
            findings.append(_error(f"dependency manifest deleted: {path}", path))
            continue
        for line in _changed_lines(root, base_commit, path):
            if line.strip() and not pattern.search(line):
                findings.append(
                    _error(f"dependency change beyond {sdk} in {path}: {line.strip()[:120]}", path)
                )
    result = GateResult(name="manifest", passed=not findings, findings=findings)
    if trace is not None:
        trace.record(
            actor="gate",
            tool="manifest_gate",
            arguments={"files": sorted(watched), "sdk": sdk},
            result="passed" if result.passed else f"{len(findings)} finding(s)",
            decision="allowed" if result.passed else "refused",
            reason="; ".join(f.message for f in findings[:5]),
        )
    return result


def _changed_lines(root: Path, base_commit: str, path: str) -> list[str]:
    diff = snapshot_diff(root, base_commit, "-U0", "--no-color", "--no-ext-diff", "--", path)
    lines = diff.decode("utf-8", "replace").splitlines()
    return [line[1:] for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def _looks_like_manifest(path: str) -> bool:
    name = Path(path).name.lower()
    return name in {"pyproject.toml", "setup.cfg", "setup.py", "pipfile"} or bool(
        re.fullmatch(r"requirements.*\.(txt|in)", name)
    )


def _error(message: str, path: str) -> Finding:
    return Finding(severity="error", message=message, path=path)
