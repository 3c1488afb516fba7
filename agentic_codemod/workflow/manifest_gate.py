"""Dependency manifests may change only as the deterministic bump changes them.

"No new dependencies" (ARCHITECTURE.md §5) is enforced without reading intentions: the expected content
of every dependency file is recomputed from the base commit by the adapter's own bump, and the candidate
must hold exactly that. Another dependency added to the SDK's line, a URL instead of a version, an extra
index, a re-pinned neighbour: each makes the file differ and fails the gate, whoever wrote it. New or
deleted manifests fail too. Lockfiles are left to the ecosystem's tool and are not compared.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentic_codemod.models import Finding
from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow.gates import Change, GateResult


def manifest_gate(
    root: Path,
    changes: Sequence[Change],
    expected: Mapping[str, str],
    *,
    lockfiles: Sequence[str] = (),
    trace: Trace | None = None,
) -> GateResult:
    """`expected` maps every dependency file of the base to the content the bump gives it."""
    findings: list[Finding] = []
    for change in changes:
        path = change.path
        if Path(path).name in lockfiles:
            continue
        if path in expected or change.old_path in expected:
            if change.status in "DR":
                findings.append(
                    _error(f"dependency manifest {_VERB[change.status]}: {change.old_path or path}", path)
                )
                continue
            current = (root / path).read_text(encoding="utf-8", errors="replace")
            if current != expected[path]:
                findings.append(
                    _error(
                        f"{path} differs from the bump of the SDK alone: "
                        + _first_difference(expected[path], current),
                        path,
                    )
                )
        elif _looks_like_manifest(path):
            findings.append(
                _error(f"dependency manifest {_VERB.get(change.status, 'changed')}: {path}", path)
            )
    result = GateResult(name="manifest", passed=not findings, findings=findings)
    if trace is not None:
        trace.record(
            actor="gate",
            tool="manifest_gate",
            arguments={"files": sorted(expected)},
            result="passed" if result.passed else f"{len(findings)} finding(s)",
            decision="allowed" if result.passed else "refused",
            reason="; ".join(f.message for f in findings[:5]),
        )
    return result


_VERB = {"A": "added", "D": "deleted", "R": "renamed", "M": "changed", "C": "copied", "T": "changed"}


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


def _looks_like_manifest(path: str) -> bool:
    name = Path(path).name.lower()
    return name in {"pyproject.toml", "setup.cfg", "setup.py", "pipfile"} or bool(
        re.fullmatch(r"requirements.*\.(txt|in)", name)
    )


def _error(message: str, path: str) -> Finding:
    return Finding(severity="error", message=message, path=path)
