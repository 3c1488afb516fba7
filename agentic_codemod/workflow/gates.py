"""Deterministic gates between the candidate and a commit. No model; a violation fails outright.

    changed_paths(root, base_commit) -> list[Change]        from git: modified, new (untracked), deleted,
                                                            renamed; the real index and .git stay untouched
    scope_gate(changes, allowed_paths, deny_globs) -> GateResult        every offending path named
    test_tamper_check(root, base_commit, changes, facts) -> GateResult  deleted, emptied or unreadable
                                                            tests, tests moved out of discovery; and the
                                                            ecosystem's findings (TestFacts.tamper: new
                                                            skips, fewer asserts or tests than at base,
                                                            result hooks, plugins, runner config anywhere)
    GateResult(name, passed, findings).to_dict()

Additions: `Change.old_path` (renames) and `Change.mode` ("120000" is a symlink, "160000" a submodule),
and `trace=` on both gates: a failed gate is a refused trace line, a passed one an allowed line.
Same path rules as the workspace (tools/paths.py): one spelling policy on both sides of the agent.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from agentic_codemod.adapters.types import TestCommand, TestFacts
from agentic_codemod.config import DEFAULT_DENY_GLOBS
from agentic_codemod.models import Finding
from agentic_codemod.tools.paths import (
    Refused,
    allowed_by,
    denied_by,
    inside_git,
    named_paths,
    needs_naming_when_new,
    normalise,
)
from agentic_codemod.tools.snapshot import read_blobs, resolve_base, snapshot_diff
from agentic_codemod.tools.trace import Trace

SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"


@dataclass(frozen=True)
class Change:
    path: str
    status: str  # A added, M modified, D deleted, R renamed, C copied, T type changed
    old_path: str | None = None
    mode: str = ""  # new git mode; "" when deleted

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class GateResult(BaseModel):
    name: str
    passed: bool
    findings: list[Finding] = Field(default_factory=list)

    @model_validator(mode="after")
    def _coded(self) -> GateResult:
        """A finding without a code of its own carries the gate's name as its code."""
        self.findings = [f if f.code else f.model_copy(update={"code": self.name}) for f in self.findings]
        return self

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


RAW_DIFF_ARGS = ("--raw", "-z", "-M", "--no-abbrev")


def changed_paths(root: Path, base_commit: str) -> list[Change]:
    return parse_raw_diff(snapshot_diff(root, base_commit, *RAW_DIFF_ARGS))


def parse_raw_diff(raw: bytes) -> list[Change]:
    """The changes listed by `git diff --raw -z -M --no-abbrev` (RAW_DIFF_ARGS)."""
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    changes: list[Change] = []
    i = 0
    while i < len(fields) and fields[i].startswith(":"):
        meta = fields[i][1:].split()
        status = meta[4][0]
        if status in "RC":
            changes.append(Change(fields[i + 2], status, fields[i + 1], meta[1]))
            i += 3
        else:
            changes.append(Change(fields[i + 1], status, None, "" if status == "D" else meta[1]))
            i += 2
    return changes


def scope_gate(
    changes: Sequence[Change],
    allowed_paths: Iterable[str],
    deny_globs: Iterable[str],
    *,
    trace: Trace | None = None,
) -> GateResult:
    allowed = list(allowed_paths)
    deny = list(dict.fromkeys([*DEFAULT_DENY_GLOBS, *deny_globs]))
    named = named_paths(allowed)
    findings: list[Finding] = []
    for change in changes:
        for path in filter(None, (change.path, change.old_path)):
            problem = _scope_problem(path, allowed, deny, named)
            if problem:
                findings.append(
                    _error(f"{problem}: {path} ({_STATUS.get(change.status, change.status)})", path)
                )
        if change.status in "ARC" and needs_naming_when_new(change.path) and change.path not in named:
            message = f"new {_name(change.path)} not named by the task: {change.path}"
            findings.append(_error(message, change.path))
        if change.mode == SYMLINK_MODE:
            findings.append(_error(f"symlink in the candidate: {change.path}", change.path))
        elif change.mode == GITLINK_MODE:
            findings.append(_error(f"submodule change in the candidate: {change.path}", change.path))
    return _result("scope", findings, len(changes), trace)


def test_tamper_check(
    root: Path,
    base_commit: str,
    changes: Sequence[Change],
    *,
    facts: TestFacts,
    trace: Trace | None = None,
    command: TestCommand | None = None,
) -> GateResult:
    """What the candidate does to the tests. The ecosystem (`facts`, the adapter's) says what a test file
    is, and what else of its tests' wiring a change introduces (TestFacts.tamper); `command`, the run's
    test command, adds the files its own pattern collects (`unittest discover -p '*tests.py'`)."""
    base = resolve_base(root, base_commit)
    stored = read_blobs(root, base, [c.old_path or c.path for c in changes if c.status in "MRCT"])
    findings: list[Finding] = []

    def is_test(path: str) -> bool:
        collected = command is not None and facts.command_collects(command, path)
        return facts.is_test_file(path) or facts.is_test_support(path) or collected

    for change in changes:
        old = change.old_path or change.path
        if change.status == "D":
            if is_test(old):
                findings.append(_error(f"test file deleted: {old}", old))
            continue
        before = stored[old].decode("utf-8", "replace") if change.status in "MRCT" and old in stored else None
        after = _current_text(root, change.path)
        new_here = change.status in "ARC"
        for message in facts.tamper(change.path, before, after, is_test(change.path), new_here):
            findings.append(_error(message, change.path))
        if change.status == "R" and is_test(old) and not is_test(change.path):
            findings.append(_error(f"test file moved out of test discovery: {old} -> {change.path}", old))
            continue
        if not is_test(change.path):
            continue
        if after is None:
            findings.append(_error(f"test file is not a readable regular file: {change.path}", change.path))
        elif (before or "").strip() and not after.strip():
            findings.append(_error(f"test file emptied: {change.path}", change.path))
    return _result("test_tamper", findings, len(changes), trace)


test_tamper_check.__test__ = False  # type: ignore[attr-defined]  # not a pytest test despite the name

_STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied", "T": "type changed"}


def _scope_problem(path: str, allowed: list[str], deny: list[str], named: frozenset[str]) -> str | None:
    try:
        norm = normalise(path)
    except Refused as exc:
        return f"refused path spelling ({exc.reason})"
    if norm != path:
        return "path spelling not normalised"
    if inside_git(norm):
        return "inside .git"
    hit = denied_by(norm, deny, named)
    if hit:
        return f"denied by {hit!r}"
    if not allowed_by(norm, allowed):
        return "outside allowed_paths"
    return None


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _current_text(root: Path, path: str) -> str | None:
    """The file's text now; None if it is not a regular file reached without a symlink."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in path.split("/")[:-1]:
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = child
        handle = os.open(_name(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        with os.fdopen(handle, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _error(message: str, path: str) -> Finding:
    return Finding(severity="error", message=message, path=path)


def _result(name: str, findings: list[Finding], checked: int, trace: Trace | None) -> GateResult:
    result = GateResult(name=name, passed=not any(f.severity == "error" for f in findings), findings=findings)
    if trace is not None:
        reason = "; ".join(f.message for f in findings)
        summary = (
            f"{'passed' if result.passed else 'failed'}: {len(findings)} finding(s) in {checked} change(s)"
        )
        trace.record(
            "gate", name, {"changes": checked}, summary, "allowed" if result.passed else "refused", reason
        )
    return result
