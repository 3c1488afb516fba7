"""The child pipeline's collector: fleet.json and fleet.html from the runs the fleet's run jobs kept.

    collect(fleet_dir, names, task) -> Path      writes fleet_dir/fleet.json and fleet_dir/fleet.html

In a GitLab fleet each run job copies its run.json, plan.json and report.html to
codemod-fleet/<repository>/ (the CI template's run job); the collector job receives every run job's
artifacts and calls this. A repository listed in `names` without a run.json is recorded as crashed, so a
run job that died before writing anything still shows.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from agentic_codemod.errors import InputError
from agentic_codemod.fleet.record import FleetEntry, FleetReport, entry_from_run, write_report
from agentic_codemod.models import RunManifest


def collect(fleet_dir: Path, names: list[str], task: Path | None) -> Path:
    if not fleet_dir.is_dir():
        raise InputError(f"{fleet_dir}: --collect is not a directory", hint="the fleet's codemod-fleet/")
    bad = [n for n in names if Path(n).name != n or n.startswith(".")]
    if bad:
        raise InputError(
            f"--expect: not a repository name: {bad[0]!r}", hint="one fleet repository name a line"
        )
    found = sorted(p.parent.name for p in fleet_dir.glob("*/run.json"))
    entries: list[FleetEntry] = []
    manifests: list[RunManifest] = []
    for name in dict.fromkeys([*names, *found]):
        run_dir = fleet_dir / name
        manifest = _manifest(run_dir / "run.json")
        if manifest is None:
            note = "" if name in found else "no run.json: the run job left no evidence (see its job log)"
            entries.append(entry_from_run(name, Path(name), run_dir, 1, 0.0, note))
            continue
        manifests.append(manifest)
        entries.append(
            entry_from_run(name, Path(manifest.repo or name), run_dir, manifest.exit_code, _seconds(manifest))
        )
    starts = sorted(m.started_at for m in manifests)
    ends = sorted(m.finished_at for m in manifests if m.finished_at)
    report = FleetReport(
        task_id=_task_id(manifests, task),
        task_sha256=hashlib.sha256(task.read_bytes()).hexdigest() if task and task.is_file() else "",
        jobs=len(entries),  # GitLab ran one job per repository
        started_at=starts[0] if starts else "",
        finished_at=ends[-1] if ends else None,
        wall_s=_span(starts[0], ends[-1]) if starts and ends else 0.0,
        repos=entries,
    )
    path = fleet_dir / "fleet.json"
    write_report(path, report)
    from agentic_codemod.report import write_fleet_report

    return write_fleet_report(path)


def _manifest(path: Path) -> RunManifest | None:
    try:
        return RunManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None


def _task_id(manifests: list[RunManifest], task: Path | None) -> str:
    ids = sorted({str((m.task or {}).get("id", "")) for m in manifests} - {""})
    return ", ".join(ids) or (task.stem if task else "unknown")


def _seconds(m: RunManifest) -> float:
    return _span(m.started_at, m.finished_at) if m.finished_at else 0.0


def _span(start: str, end: str) -> float:
    try:
        return round(max((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds(), 0), 2)
    except ValueError:
        return 0.0
