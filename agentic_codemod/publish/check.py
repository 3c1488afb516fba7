"""The publish re-check (ARCHITECTURE.md §6.4): is the candidate on disk the one that was approved?

    check_candidate(run_dir) -> ApprovedCandidate      or raises PublishRefused listing every problem

Nothing is trusted from memory: the hash is recomputed from `changes.patch` and compared with what
run.json recorded for the candidate, what review.json approved, what every gate passed and what the
last verification proved. An approval for another hash is void. Only a run that ended `succeeded`
with an `approve` verdict can be published. The merge request text is bound to the candidate too: it
must carry the line `<!-- agentic-codemod candidate-sha256=<the hash> -->` and no other such line. The
check only reads the run directory; the gates themselves are re-derived from base + patch when
publishing (publish/gates.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from agentic_codemod.config import first_error
from agentic_codemod.errors import CandidateRejected
from agentic_codemod.models import Finding, ReviewVerdict, RunManifest
from agentic_codemod.status import Status
from agentic_codemod.task import TaskSpec
from agentic_codemod.workflow.candidate import patch_sha256

_M = TypeVar("_M", RunManifest, ReviewVerdict)
# The tool's own line (brains.py writes it last), whole: a file name or any other text that merely holds
# "candidate-sha256=..." is not a binding (repository data is escaped in the text, mr_text.py)
MR_BINDING = re.compile(r"^<!-- agentic-codemod candidate-sha256=([0-9a-fA-F]*) -->$", re.MULTILINE)


class PublishRefused(CandidateRejected):
    """The run directory does not prove an approved, verified candidate; nothing is published (exit 1)."""

    def __init__(self, run_dir: Path, problems: list[str]) -> None:
        super().__init__(
            f"{run_dir}: publish refused: " + "; ".join(problems),
            hint="run the task again; an approval holds only for the exact candidate it reviewed",
        )
        self.problems = problems


@dataclass(frozen=True)
class ApprovedCandidate:
    run_dir: Path
    patch: Path
    sha256: str
    base_commit: str
    run_id: str
    task_id: str
    apm_lock_sha256: str
    title: str
    description: str
    findings: tuple[Finding, ...]
    files: tuple[str, ...]
    finished_at: str
    task: TaskSpec  # as run.json recorded it, validated again: publish re-derives the gates with it

    @property
    def short(self) -> str:
        return self.sha256[:12]


def check_candidate(run_dir: Path) -> ApprovedCandidate:
    run_dir = Path(run_dir)
    problems: list[str] = []
    manifest = _load(run_dir / "run.json", RunManifest, problems)
    review = _load(run_dir / "review.json", ReviewVerdict, problems)
    patch = run_dir / "changes.patch"
    if not patch.is_file():
        problems.append("changes.patch is missing")
    title, description = _read_draft(run_dir / "merge_request.md", problems)
    if manifest is None or review is None or problems:
        raise PublishRefused(run_dir, problems)
    sha = patch_sha256(patch)
    problems += _outcome_problems(manifest)
    problems += _identity_problems(manifest, sha, patch.stat().st_size)
    problems += _approval_problems(manifest, review, sha)
    problems += _evidence_problems(manifest, sha)
    problems += _binding_problems(description, sha)
    task = _task(manifest, problems)
    if problems or task is None:
        raise PublishRefused(run_dir, problems)
    assert manifest.candidate is not None
    return ApprovedCandidate(
        run_dir=run_dir,
        patch=patch,
        sha256=sha,
        base_commit=manifest.candidate.base_commit,
        run_id=manifest.run_id,
        task_id=task.id,
        apm_lock_sha256=str(manifest.apm.get("lock_sha256", "")),
        title=title,
        description=description,
        findings=tuple(review.findings),
        files=tuple(manifest.candidate.files),
        finished_at=manifest.finished_at or manifest.started_at,
        task=task,
    )


def _task(m: RunManifest, problems: list[str]) -> TaskSpec | None:
    if not m.task:
        return None  # _outcome_problems names it
    try:
        return TaskSpec.model_validate(m.task)
    except ValidationError as exc:
        problems.append(f"run.json task is not a valid task: {first_error(exc)}")
        return None


def _outcome_problems(m: RunManifest) -> list[str]:
    problems = []
    if m.status != Status.SUCCEEDED or m.exit_code != Status.SUCCEEDED.exit_code:
        problems.append(f"the run ended {m.status} (exit {m.exit_code}), not succeeded: {m.reason or '-'}")
    if not m.task or not m.task.get("id"):
        problems.append("run.json records no task id")
    if not m.apm.get("lock_sha256"):
        problems.append("run.json records no APM lockfile hash: the context of the run is unknown")
    return problems


def _identity_problems(m: RunManifest, sha: str, size: int) -> list[str]:
    c = m.candidate
    if c is None:
        return ["run.json records no candidate"]
    problems = []
    if c.sha256 != sha:
        problems.append(
            f"changes.patch hashes to {sha[:12]} but run.json froze {c.sha256[:12]}: "
            "the candidate changed after it was frozen"
        )
    if not c.base_commit or c.base_commit != m.base_commit:
        problems.append(
            f"candidate base {c.base_commit[:12] or '-'} differs from the run's base "
            f"{(m.base_commit or '-')[:12]}"
        )
    if size == 0 or not c.files:
        problems.append("the candidate changes nothing")
    return problems


def _approval_problems(m: RunManifest, review: ReviewVerdict, sha: str) -> list[str]:
    problems = []
    for where, verdict in (("review.json", review), ("run.json verdict", m.verdict)):
        if verdict is None:
            problems.append(f"{where}: no verdict")
        elif verdict.verdict != "approve":
            problems.append(f"{where}: verdict is {verdict.verdict}, only approve publishes")
        elif verdict.candidate_sha256 != sha:
            problems.append(
                f"{where}: the approval is for candidate {(verdict.candidate_sha256 or '-')[:12]}, "
                f"not {sha[:12]}: an approval for another candidate is void"
            )
    return problems


def _evidence_problems(m: RunManifest, sha: str) -> list[str]:
    problems = []
    if not m.gates:
        problems.append("run.json records no gate results")
    for gate in m.gates:
        name = gate.get("name", "?")
        if gate.get("passed") is not True:
            problems.append(f"gate {name} did not pass")
        if gate.get("candidate_sha256") != sha:
            problems.append(
                f"gate {name} judged candidate {str(gate.get('candidate_sha256') or '-')[:12]}, "
                f"not {sha[:12]}"
            )
    last = m.verifications[-1] if m.verifications else None
    if last is None or last.phase == "baseline":
        problems.append("no verification of the candidate is recorded")
    elif not last.passed:
        problems.append(f"the last verification ({last.phase}) is not green")
    elif last.candidate_sha256 != sha:
        problems.append(
            f"the last verification ({last.phase}) proved candidate "
            f"{(last.candidate_sha256 or '-')[:12]}, not {sha[:12]}"
        )
    return problems


def _binding_problems(description: str, sha: str) -> list[str]:
    bound = set(MR_BINDING.findall(description))
    if not bound:
        return [
            "merge_request.md names no candidate (a line `<!-- agentic-codemod candidate-sha256=... -->`): "
            "the text is bound to nothing"
        ]
    other = sorted(b for b in bound if b != sha)
    if other:
        return [
            f"merge_request.md was written for candidate {other[0][:12] or '-'}, not {sha[:12]}: "
            "a text for another candidate is void"
        ]
    return []


def _load(path: Path, model: type[_M], problems: list[str]) -> _M | None:
    try:
        return model.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        problems.append(f"{path.name} is missing")
    except (OSError, ValueError, ValidationError) as exc:
        problems.append(f"{path.name} is unreadable: {str(exc).splitlines()[0]}")
    return None


def _read_draft(path: Path, problems: list[str]) -> tuple[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        problems.append("merge_request.md is not UTF-8 text")
        return "", ""
    except OSError:
        problems.append("merge_request.md is missing")
        return "", ""
    first, _, rest = text.partition("\n")
    if not first.startswith("# ") or not first[2:].strip():
        problems.append("merge_request.md does not start with '# <title>'")
        return "", ""
    return first[2:].strip(), rest.strip("\n")
