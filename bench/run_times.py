"""A finished run's own seconds, read from its run dir: what overhead.py and corpus.py print.

    read_trace(run_dir) -> [record]           trace.jsonl, one dict per record
    kind(argv) -> str                         what a process of the run is: install, listing or test run
    seconds(record) -> float                  a run_process record's duration
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


def kind(argv: list[str]) -> str:
    text = " ".join(argv)
    if " install " in f" {text} " or " venv " in f" {text} " or "compileall" in text or text == "template":
        return "installs (template copy, venv, uv/pip)"
    if "class Unusual" in text or "importlib.metadata" in text:  # installed_listing.py, or the one-liner
        return "environment listings"
    return TEST_RUNS


def seconds(record: dict[str, Any]) -> float:
    return float(record["result"].split("duration=", 1)[1].split("s", 1)[0])


def test_runs(run_dir: Path) -> TestRuns:
    """The run's test runs; TestRuns(0, 0.0, 0.0) when run.json holds none (a run that ended before)."""
    manifest = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    verifications = [v for v in manifest.get("verifications", []) if v.get("duration_s")]
    summed = sum(float(v["duration_s"]) for v in verifications)
    return TestRuns(len(verifications), summed, _union(read_trace(run_dir)) if verifications else 0.0)


def _union(trace: list[dict[str, Any]]) -> float:
    """Seconds in which some test run ran (the union of their intervals: each ends at its trace record)."""
    spans = []
    for record in trace:
        argv = record.get("arguments", {}).get("argv")
        if record.get("tool") != "run_process" or not argv or kind(argv) != TEST_RUNS:
            continue
        end = datetime.fromisoformat(record["time"]).timestamp()
        spans.append((end - seconds(record), end))
    covered, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        covered += max(0.0, end - max(start, reach))
        reach = max(reach, end)
    return covered
