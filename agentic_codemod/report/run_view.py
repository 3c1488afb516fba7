"""What report.html shows about one run, read from the run directory's artifacts (ARCHITECTURE.md §8).

load_run(run_dir) -> RunView        raises InputError when run.json is missing or not a run manifest
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentic_codemod.config import REPORT_DIFF_CHARS, REPORT_TEXT_CHARS
from agentic_codemod.errors import InputError
from agentic_codemod.models import ChangePlan, ReviewVerdict, RunManifest
from agentic_codemod.report import diff as diffs
from agentic_codemod.report import test_ids
from agentic_codemod.report.artifacts_read import Text, TraceRows, cut, read_json, read_text, read_trace
from agentic_codemod.report.diff import DiffFile, DiffLine
from agentic_codemod.status import Outcome, Status
from agentic_codemod.visible import visible

# The banner's colour class per fleet outcome; a cancelled run is shown like a paused one (it can run again).
TONE = {Outcome.DONE: "ok", Outcome.NEEDS_HUMAN: "human", Outcome.PAUSED: "paused", Outcome.FAILED: "fail"}


@dataclass
class Step:
    name: str
    result: str
    started_at: str
    duration_s: float | None


@dataclass
class GateRow:
    name: str
    passed: bool
    findings: list[str]
    sha256: str
    bound: str  # "candidate" | "other" | "none"


@dataclass
class EnvRow:
    package: str
    baseline: str
    after: str
    changed: bool


@dataclass(frozen=True)
class LockRow:
    """One entry of run.json `locked`: what a refreshed lockfile locks, what the tests ran."""

    file: str
    package: str
    locked: str
    tested: str
    same: bool  # the tests ran exactly what it locks


@dataclass
class RunView:
    run_dir: Path
    manifest: RunManifest
    tone: str
    steps: list[Step]
    tests: test_ids.TestTable
    gates: list[GateRow]
    review: ReviewVerdict | None
    plan: ChangePlan | None
    diff: list[DiffLine]
    diff_files: list[DiffFile]
    diff_cut: bool
    trace: TraceRows
    merge_request: Text
    tokens: list[dict[str, str]]  # one row per role and a total; every figure "unknown" when None
    environments: list[EnvRow]
    env_unreadable: list[str]
    locks: list[LockRow] = field(default_factory=list)
    lock_formats: list[tuple[str, str, str]] = field(default_factory=list)  # file, before, after
    task: dict[str, str] = field(default_factory=dict)

    @property
    def total_duration(self) -> float:
        return sum(s.duration_s or 0.0 for s in self.steps)


def _diff_files(lines: list[DiffLine], manifest: RunManifest, cut: bool) -> list[DiffFile]:
    """The files of the diff as shown; where the page cut the diff, then every other file of the candidate
    (run.json): the cut must not drop a changed file from the list."""
    shown = diffs.files(lines)
    if not cut:
        return shown
    if shown:  # the cut falls in the last file shown: its counts are partial
        shown[-1].cut = True
    listed = {f.path for f in shown}
    changed = [visible(f) for f in (manifest.candidate.files if manifest.candidate else [])]
    return shown + [DiffFile(f, 0, 0, cut=True) for f in changed if f not in listed]


def load_run(run_dir: Path) -> RunView:
    manifest = _manifest(run_dir / "run.json")
    patch = read_text(run_dir / "changes.patch", REPORT_DIFF_CHARS)
    lines = diffs.lines(patch.text)
    review = _model(ReviewVerdict, read_json(run_dir / "review.json")) or manifest.verdict
    plan = _model(ChangePlan, read_json(run_dir / "plan.json")) or manifest.plan
    env_rows, unreadable = _environments(manifest)
    return RunView(
        run_dir=run_dir,
        manifest=manifest,
        tone="paused" if manifest.status == Status.CANCELLED else TONE[manifest.status.outcome],
        steps=[_step(s) for s in manifest.steps],
        tests=test_ids.compare(run_dir, manifest),
        gates=_gates(manifest),
        review=review,
        plan=plan,
        diff=lines,
        diff_files=_diff_files(lines, manifest, patch.cut),
        diff_cut=patch.cut,
        trace=read_trace(run_dir / "trace.jsonl"),
        merge_request=read_text(run_dir / "merge_request.md", REPORT_TEXT_CHARS),
        tokens=_tokens(manifest.tokens),
        environments=env_rows,
        env_unreadable=unreadable,
        locks=_locks(manifest),
        lock_formats=[
            (cut(f, 200), cut(v.get("before", ""), 100), cut(v.get("after", ""), 100))
            for f, v in manifest.lock_formats.items()
        ],
        task=_task(manifest.task),
    )


def _manifest(path: Path) -> RunManifest:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return RunManifest.model_validate(data)
    except FileNotFoundError:
        raise InputError(
            f"{path}: no run.json: not a run directory", hint="pass the --run-dir of an agentic-codemod run"
        ) from None
    except (OSError, ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"{path}: not a readable run manifest (agentic-codemod/run@1): {cut(first, 300)}",
            hint="the report reads run.json as the run wrote it; rerun the task if it was edited",
        ) from None


def _model(cls: Any, data: dict[str, Any] | None) -> Any:
    if data is None:
        return None
    try:
        return cls.model_validate(data)
    except ValidationError:
        return None


def _step(record: dict[str, Any]) -> Step:
    duration = record.get("duration_s")
    return Step(
        name=cut(record.get("step", "?"), 200),
        result=cut(record.get("result", "")),
        started_at=cut(record.get("started_at", ""), 40),
        duration_s=float(duration) if isinstance(duration, int | float) else None,
    )


def _gates(m: RunManifest) -> list[GateRow]:
    candidate = m.candidate.sha256 if m.candidate else None
    rows = []
    for gate in m.gates:
        sha = gate.get("candidate_sha256")
        sha = sha if isinstance(sha, str) else ""
        findings = gate.get("findings") if isinstance(gate.get("findings"), list) else []
        rows.append(
            GateRow(
                name=cut(gate.get("name", "?"), 200),
                passed=gate.get("passed") is True,
                findings=[_finding(f) for f in findings or []],
                sha256=sha,
                bound="none" if not sha else ("candidate" if sha == candidate else "other"),
            )
        )
    return rows


def _finding(finding: Any) -> str:
    if not isinstance(finding, dict):
        return cut(finding)
    where = f" ({finding['path']})" if finding.get("path") else ""
    return cut(f"{finding.get('severity', '')}: {finding.get('message', '')}{where}")


def _tokens(tokens: dict[str, Any] | None) -> list[dict[str, str]]:
    keys = ("model_calls", "tool_calls", "prompt_tokens", "completion_tokens")
    if tokens is None:
        return [{"role": "all roles", **dict.fromkeys(keys, "unknown")}]
    roles = tokens.get("roles") if isinstance(tokens.get("roles"), dict) else {}
    rows = [{"role": cut(role, 100), **_figures(figures, keys)} for role, figures in (roles or {}).items()]
    total = tokens.get("total")
    rows.append({"role": "total", **_figures(total if isinstance(total, dict) else {}, keys)})
    return rows


def _figures(figures: Any, keys: tuple[str, ...]) -> dict[str, str]:
    figures = figures if isinstance(figures, dict) else {}
    return {k: "unknown" if figures.get(k) is None else cut(figures[k], 40) for k in keys}


def _environments(m: RunManifest) -> tuple[list[EnvRow], list[str]]:
    baseline, after = m.environments.get("baseline"), m.environments.get("after")
    unreadable = [name for name, env in m.environments.items() if env is None]
    names = sorted({*(baseline or {}), *(after or {})})
    rows = []
    for name in names:
        b = (baseline or {}).get(name, "—" if baseline is not None else "unreadable")
        a = (after or {}).get(name, "—" if after is not None else "unreadable")
        rows.append(EnvRow(cut(name, 200), cut(b, 100), cut(a, 100), b != a))
    return rows, unreadable


def _locks(m: RunManifest) -> list[LockRow]:
    """run.json `locked`, one row per entry: the versions locked ("no longer locked" when none) and the
    one the after environment held ("not installed" when none); `same` only where it is one of them,
    as written (the run compared versions exactly; the page does not re-judge)."""
    rows = []
    for file, entries in sorted(m.locked.items()):
        for package, entry in sorted(entries.items()):
            locked = entry.get("locked") or []
            versions = [str(v) for v in locked] if isinstance(locked, list) else [str(locked)]
            tested = entry.get("tested")
            shown = " or ".join(versions) or "no longer locked"
            rows.append(
                LockRow(
                    cut(file, 200),
                    cut(package, 200),
                    cut(shown, 100),
                    cut(str(tested), 100) if tested is not None else "not installed",
                    tested is not None and str(tested) in versions,
                )
            )
    return rows


def _task(task: dict[str, Any] | None) -> dict[str, str]:
    if not task:
        return {}
    sdk = task.get("sdk") if isinstance(task.get("sdk"), dict) else {}
    return {
        "id": cut(task.get("id", ""), 200),
        "title": cut(task.get("title", ""), 500),
        "sdk": cut((sdk or {}).get("name", ""), 200),
        "from": cut((sdk or {}).get("from", ""), 200),
        "to": cut((sdk or {}).get("to", ""), 200),
    }
