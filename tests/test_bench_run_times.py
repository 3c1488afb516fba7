"""bench/run_times.py, which overhead.py and corpus.py read a finished run's test runs with: on a real fixture
run (the trace's records of other processes, the listings and installs, are not counted as test runs), on a
hand-written trace (overlaps counted once) and in corpus.py's cost line."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass module must be importable by its name
    spec.loader.exec_module(module)
    return module


run_times = _load("bench_run_times", ROOT / "bench" / "run_times.py")
corpus = _load("bench_corpus_cost", ROOT / "bench" / "corpus.py")


def test_a_fixture_run_has_exactly_its_two_test_runs(
    acme_repo: Path, run_codemod: Callable[..., Any]
) -> None:
    result = run_codemod(acme_repo, "acme-sdk-2-rules.yml")
    assert result.code == 0, result.manifest["reason"]

    tests = run_times.test_runs(result.run_dir)
    kinds = run_times.by_kind(result.run_dir)
    verifications = result.manifest["verifications"]
    assert tests.count == len(verifications) == 2  # the baseline's and the candidate's
    assert tests.summed == sum(v["duration_s"] for v in verifications) > 0
    assert set(kinds) == {
        run_times.TEST_RUNS,
        "environment listings",
        "installs (template copy, venv, uv/pip)",
    }
    slack = 0.02  # the trace's durations are in hundredths of a second, its times in milliseconds
    assert abs(kinds[run_times.TEST_RUNS] - tests.summed) <= slack
    longest = max(v["duration_s"] for v in verifications)
    assert longest - slack <= tests.wall <= tests.summed + slack


def _record(end: str, seconds: float, argv: list[str]) -> dict[str, Any]:
    return {
        "time": end,
        "tool": "run_process",
        "arguments": {"argv": argv},
        "result": f"exit=0 duration={seconds}s",
    }


def test_overlapping_test_runs_count_once(tmp_path: Path) -> None:
    before, after = ["env/bin/python", "-m", "pytest", "-q"], ["env-after/bin/python", "-m", "pytest", "-q"]
    trace = [
        _record("2026-12-01T10:00:04.000+00:00", 4.0, before),  # 0 .. 4
        _record("2026-12-01T10:00:03.000+00:00", 1.0, ["uv", "pip", "install", "x"]),  # not a test run
        _record("2026-12-01T10:00:05.000+00:00", 2.0, ["pdm", "update", "--no-sync"]),  # nor a lock refresh
        _record("2026-12-01T10:00:06.000+00:00", 3.0, after),  # 3 .. 6: one second shared
        _record("2026-12-01T10:00:09.500+00:00", 0.5, after),  # 9 .. 9.5: alone
    ]
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in trace))
    runs = [(before, 4.0), (after, 3.0), (after, 0.5)]
    manifest = {"verifications": [{"command": argv, "duration_s": seconds} for argv, seconds in runs]}
    (tmp_path / "run.json").write_text(json.dumps(manifest))

    assert run_times.test_runs(tmp_path) == run_times.TestRuns(3, 7.5, 6.5)
    assert run_times.by_kind(tmp_path) == {
        run_times.TEST_RUNS: 7.5,
        "installs (template copy, venv, uv/pip)": 1.0,
        "other processes (lock refresh, tool probes)": 2.0,
    }

    (tmp_path / "run.json").write_text(json.dumps({"verifications": []}))  # ended before its tests
    assert run_times.test_runs(tmp_path) == run_times.TestRuns(0, 0.0, 0.0)


def test_corpus_cost_line_counts_only_runs_that_tested_both_versions() -> None:
    results = [
        {"wall_s": 30.0, "tests_s": 20.0, "tests_wall_s": 12.0, "test_runs": 2},
        {"wall_s": 10.0, "tests_s": 2.0, "tests_wall_s": 2.0, "test_runs": 2},
        {"wall_s": 50.0, "tests_s": 40.0, "tests_wall_s": 40.0, "test_runs": 2},
        {"wall_s": 9.0, "tests_s": 1.0, "tests_wall_s": 1.0, "test_runs": 1},  # baseline only: left out
    ]
    line = corpus.cost_summary(results)

    assert line.startswith("corpus cost: 3 runs that tested both versions")
    assert "median 1.50x (from 1.25x to 5.00x)" in line
    assert "90 s of runs, 62 s of test runs (54 s with overlaps counted once)" in line
    assert corpus._cost(results[0]) == ", tests 20.0s, 1.5x" and corpus._cost({"tests_s": 0.0}) == ""
    assert corpus.cost_summary(results[3:]) == "corpus cost: no case ran both versions' tests"
