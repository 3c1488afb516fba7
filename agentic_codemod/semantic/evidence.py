"""What the gate may show Jev: acceptance criteria, the last verification, the frozen diff — bounded.

    read_evidence(run_dir, settings) -> Evidence     raises Unjudgeable naming the file and the field
    Evidence.state                                   the text sent as System One `state`

Only these three things are sent. Not review.json (the gate is a second, independent look), not the
coder's conversation, not the plan's reasoning. The artifacts are the pipeline's, already redacted.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentic_codemod.errors import CandidateRejected
from agentic_codemod.semantic.settings import SemanticSettings

_DIFF_PATH = re.compile(r"^diff --git a/(.+?) b/(.+)$", re.MULTILINE)
# The list of changed paths is always sent in full unless it alone is absurdly long.
_MAX_PATHS = 500


class Unjudgeable(CandidateRejected):
    """The run directory does not hold what the gate needs; nothing was sent (exit 1)."""


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Criteria(_Loose):
    acceptance_criteria: list[str] = Field(default_factory=list)


class _Verification(_Loose):
    phase: str = ""
    command: list[str] | str
    exit_code: int | None
    passed: bool
    output_tail: str = ""


class _Candidate(_Loose):
    sha256: str | None = None


class _RunFacts(_Loose):
    task: _Criteria | None = None
    plan: _Criteria | None = None
    verifications: list[_Verification] = Field(default_factory=list)
    candidate: _Candidate | None = None


@dataclass(frozen=True)
class Evidence:
    criteria: list[str]
    last: _Verification
    candidate_sha256: str
    diff_bytes: int
    diff_truncated: bool
    state: str

    @property
    def verification_failed(self) -> bool:
        return not self.last.passed


def read_evidence(run_dir: Path, settings: SemanticSettings) -> Evidence:
    facts = _read_run(run_dir / "run.json")
    patch_path = run_dir / "changes.patch"
    try:
        patch = patch_path.read_bytes()
    except OSError as exc:
        raise Unjudgeable(f"{patch_path}: cannot read the candidate: {exc.strerror or exc}") from exc
    sha = hashlib.sha256(patch).hexdigest()
    if not patch.strip():
        raise Unjudgeable(f"{patch_path}: the candidate changes nothing")
    if facts.candidate and facts.candidate.sha256 and facts.candidate.sha256 != sha:
        raise Unjudgeable(
            f"{patch_path}: hashes to {sha[:12]} but run.json froze {facts.candidate.sha256[:12]}",
            hint="the candidate changed after it was frozen; run the task again",
        )
    criteria = (facts.task.acceptance_criteria if facts.task else []) or (
        facts.plan.acceptance_criteria if facts.plan else []
    )
    if not criteria:
        raise Unjudgeable(f"{run_dir / 'run.json'}: field 'task.acceptance_criteria' is empty or missing")
    if not facts.verifications:
        raise Unjudgeable(f"{run_dir / 'run.json'}: field 'verifications' is empty: nothing proves the diff")
    last = facts.verifications[-1]
    if last.phase == "baseline":
        raise Unjudgeable(f"{run_dir / 'run.json'}: the last verification is the baseline, not the diff")
    diff, truncated = cut_middle(patch, settings.max_diff_bytes)
    state = _state(criteria, last, sha, patch, diff, truncated, settings.max_evidence_bytes)
    return Evidence(criteria, last, sha, len(patch), truncated, state)


def cut_middle(data: bytes, limit: int) -> tuple[str, bool]:
    """`data` as text, at most about `limit` bytes: head and tail kept, the middle named as omitted."""
    if len(data) <= limit:
        return data.decode("utf-8", "replace"), False
    head, tail = data[: limit * 2 // 3], data[len(data) - limit // 3 :]
    omitted = len(data) - len(head) - len(tail)
    return (
        head.decode("utf-8", "ignore")
        + f"\n[... {omitted} bytes of the diff omitted ...]\n"
        + tail.decode("utf-8", "ignore"),
        True,
    )


def _read_run(path: Path) -> _RunFacts:
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise Unjudgeable(f"{path}: missing") from exc
    except (OSError, ValueError) as exc:
        raise Unjudgeable(f"{path}: unreadable: {str(exc).splitlines()[0]}") from exc
    try:
        return _RunFacts.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "<root>"
        raise Unjudgeable(f"{path}: field '{where}': {err['msg']}") from exc


def _state(
    criteria: list[str],
    last: _Verification,
    sha: str,
    patch: bytes,
    diff: str,
    truncated: bool,
    max_evidence_bytes: int,
) -> str:
    command = last.command if isinstance(last.command, str) else " ".join(last.command)
    tail = last.output_tail.encode("utf-8")[-max_evidence_bytes:].decode("utf-8", "ignore")
    paths = sorted({b for _, b in _DIFF_PATH.findall(patch.decode("utf-8", "replace"))})
    shown = f"first and last parts of {len(patch)} bytes" if truncated else f"{len(patch)} bytes, complete"
    parts = [
        "## Acceptance criteria",
        *(f"- {c}" for c in criteria),
        "",
        "## Last verification (real run, recorded by the pipeline)",
        f"command: {command}",
        f"exit code: {'did not finish' if last.exit_code is None else last.exit_code}",
        f"result: {'passed' if last.passed else 'FAILED'}",
        "output tail:",
        tail or "(empty)",
        "",
        f"## Changed paths ({len(paths)})",
        *(f"- {p}" for p in paths[:_MAX_PATHS]),
        *([f"- ... and {len(paths) - _MAX_PATHS} more"] if len(paths) > _MAX_PATHS else []),
        "",
        f"## Candidate diff (sha256 {sha[:12]}; {shown})",
        diff,
    ]
    return "\n".join(parts)
