"""A finished run's own seconds, read from its run dir: what overhead.py and corpus.py print.

    read_trace(run_dir) -> [record]           trace.jsonl, one dict per record
    by_kind(run_dir) -> {kind: seconds}       the run's processes by what they are: installs, environment
                                              listings, test runs (a verification's command), other
    seconds(record) -> float                  a process record's duration
    test_runs(run_dir) -> TestRuns            the run's test runs: seconds summed (run.json verifications)
                                              and their wall (trace.jsonl, overlaps counted once)

The ratio both benches print is the run's wall time against `TestRuns.summed`, the seconds of its two test
runs (issue 13's definition); `TestRuns.wall` says how much of that ran at the same time (the baseline's
tests beside the bump).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

TEST_RUNS = "test runs (in the sandbox)"


@dataclass(frozen=True)
class TestRuns:
    count: int  # run.json verifications with a test run in them
    summed: float  # their seconds, one after the other
    wall: float  # seconds in which some test run ran


def read_trace(run_dir: Path) -> list[dict[str, Any]]:
    text = (run_dir / "trace.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]  # JSON Lines: "\n" only


def by_kind(run_dir: Path) -> dict[str, float]:
    kinds: dict[str, float] = {}
    commands = _commands(_verifications(run_dir))
    for record in read_trace(run_dir):
        if record.get("tool") in ("run_process", "environment_template"):
            what = _kind(record["arguments"].get("argv", ["template"]), commands)
            kinds[what] = kinds.get(what, 0.0) + seconds(record)
    return kinds


def seconds(record: dict[str, Any]) -> float:
    return float(record["result"].split("duration=", 1)[1].split("s", 1)[0])


def test_runs(run_dir: Path) -> TestRuns:
    """The run's test runs; TestRuns(0, 0.0, 0.0) when run.json holds none (a run that ended before)."""
    verifications = [v for v in _verifications(run_dir) if v.get("duration_s")]
    summed = sum(float(v["duration_s"]) for v in verifications)
    wall = _union(read_trace(run_dir), _commands(verifications)) if verifications else 0.0
    return TestRuns(len(verifications), summed, wall)


def _verifications(run_dir: Path) -> list[dict[str, Any]]:
    return list(json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("verifications", []))


def _commands(verifications: list[dict[str, Any]]) -> list[list[str]]:
    """The argv of each verification: a process with one of these is a test run (a lock refresh, `pdm
    update` say, is a process of the run too, and no test run)."""
    return [list(v["command"]) for v in verifications if v.get("command")]


def _kind(argv: list[str], commands: list[list[str]]) -> str:
    text = " ".join(argv)
    if argv in commands:
        return TEST_RUNS
    if " install " in f" {text} " or " venv " in f" {text} " or "compileall" in text or text == "template":
        return "installs (template copy, venv, uv/pip)"
    if "class Unusual" in text or "importlib.metadata" in text:  # installed_listing.py, or the one-liner
        return "environment listings"
    return "other processes (lock refresh, tool probes)"


def _union(trace: list[dict[str, Any]], commands: list[list[str]]) -> float:
    """Seconds in which some test run ran (the union of their intervals: each ends at its trace record)."""
    spans = []
    for record in trace:
        argv = record.get("arguments", {}).get("argv")
        if record.get("tool") != "run_process" or argv not in commands:
            continue
        end = datetime.fromisoformat(record["time"]).timestamp()
        spans.append((end - seconds(record), end))
    covered, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        covered += max(0.0, end - max(start, reach))
        reach = max(reach, end)
    return covered
