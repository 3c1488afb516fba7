"""Builders for lesson records and run artifacts used by the experience tests (imported by name)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fixtures_support import FIXTURES

from agentic_codemod.workflow.artifacts import write_json
from agentic_codemod.workflow.state import RunState

RUN_ID = "20240501T120000-0123abcd"
PACKAGE_CONTEXT = FIXTURES / "packages" / "acme-sdk-2-migration" / ".apm" / "context"
ACME_WORKER = FIXTURES / "acme-worker"


def lesson_record(**changes: Any) -> dict[str, Any]:
    """A valid lesson as JSON data; `changes` replace top-level keys, `cue`/`evidence` are merged."""
    record: dict[str, Any] = {
        "format": "agentic-codemod/lesson@1",
        "id": f"ACME900@{RUN_ID}",
        "cue": {"ecosystem": "python", "sdk": "acme-sdk", "construct": "ACME900", "target": ">=2.1.0"},
        "lesson": "Rename the string 'fetch' to 'get' where the dispatch table is defined.",
        "evidence": {
            "run_id": RUN_ID,
            "paths": ["run.json#/verifications/1", "changes.patch"],
            "results": [],
        },
        "confidence": "medium",
        "confidence_reason": "one run; the failing output names the flagged file",
        "counter_example": "targets below 2.1.0",
        "source_run": RUN_ID,
    }
    for key in ("cue", "evidence"):
        if isinstance(changes.get(key), dict):
            record[key] = {**record[key], **changes.pop(key)}
    record.update(changes)
    return record


def write_lines(path: Path, *records: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def finish(state: RunState) -> None:
    """What artifacts.settle + write_all leave before the proposals: run.json, plan.json, changes.patch."""
    state.manifest.verifications = state.verifications
    state.manifest.plan = state.plan
    write_json(state.paths.artifact("run.json"), state.manifest)
    if state.plan is not None:
        write_json(state.paths.artifact("plan.json"), state.plan)
    state.paths.artifact("changes.patch").write_text("")
