"""What a running `agentic-codemod run` is doing, read from its run directory (it never reports directly).

    current_step(run_dir) -> str

The signals, newest wins: run.json (artifacts being written), a JUnit report (a verification finished),
the last trace line (bump, a codemod rule, implement), the venv (baseline), the clone (intake).
"""

from __future__ import annotations

import json
from pathlib import Path


def current_step(run_dir: Path) -> str:
    if (run_dir / "run.json").exists():
        return "writing artifacts"
    signals: list[tuple[float, str]] = []
    for junit in (run_dir / "reports").glob("junit-*.xml"):
        phase = junit.stem.removeprefix("junit-")
        signals.append((_mtime(junit), "review" if phase != "baseline" else "bump"))
    trace = run_dir / "trace.jsonl"
    if trace.exists() and trace.stat().st_size:
        signals.append((_mtime(trace), _from_trace(trace)))
    if not signals:
        if (run_dir / "env").exists():
            return "baseline"
        return "intake" if (run_dir / "worktree").exists() else "starting"
    return max(signals)[1]


def _from_trace(trace: Path) -> str:
    with trace.open("rb") as f:
        f.seek(max(0, trace.stat().st_size - 4096))
        lines = f.read().decode("utf-8", "replace").strip().split("\n")  # JSON Lines: "\n" only
    try:
        last = json.loads(lines[-1])
    except (ValueError, IndexError):
        return "working"
    actor, tool = str(last.get("actor", "")), str(last.get("tool", ""))
    if actor.startswith("codemod:"):
        return f"codemod {actor.split(':', 1)[1]}"
    if tool in ("implement", "edit", "write") and actor not in ("bump",):
        return "implement"
    return "verify" if tool == "run_verification" else actor or "working"


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
