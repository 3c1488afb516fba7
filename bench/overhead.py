"""How much the pipeline costs on top of the repository's own tests, and how fast the CLI starts.

    .venv/bin/python bench/overhead.py [--quick]

Prints, for the acme-app fixture in offline mode (rule-fixable task), with a warm cache (a first run
builds the environment template in a private cache; `--runs` runs, 5 by default, are measured):
  - wall time of the whole run vs. the wall time of its two test runs, as a ratio: the median run's,
    with every run's ratio beside it (a shared machine moves single runs by 20% and more);
  - the same run with its two test runs one after the other (`concurrent_baseline: false`), in runs
    alternating with the measured ones: the wall time the baseline beside the bump saves (with it, each test
    run shares the 2 cores, so its own seconds grow and the first ratio's denominator with them);
  - the breakdown by phase: before the workflow (interpreter, imports, settings), each step of run.json,
    and inside them the installs, the environment listings and the test runs (from trace.jsonl);
  - the interpreter and imports slice of one more run (`-X importtime`, by top-level package, wherever the
    import happens: before the workflow or lazily inside a step) and a bare interpreter's start;
  - `agentic-codemod --help` start-up time (median of several runs);
  - what the sandbox adds per verification: the fixture's test command in the bubblewrap box vs. as a
    plain process (paired runs, median difference), and the disposable copy made before each run.
--quick: one run with a cold cache, one start-up, no sandbox pairs (CI's smoke run).
Bytecode: the tool's own modules run from bytecode, as an installed tool does (pip byte-compiles a wheel at
install time). The runs here get a private PYTHONPYCACHEPREFIX and may write it, whatever the caller's
PYTHONDONTWRITEBYTECODE says: the warm-up run fills it, the measured run reads it (--quick: compiled cold).
Not a test: it prints figures and asserts nothing about time; it stops loudly when the run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fixtures"))
sys.path.insert(0, str(ROOT / "bench"))

import run_times  # noqa: E402  (bench/run_times.py)
from materialize import materialize  # noqa: E402
from wheelhouse import build_wheelhouse  # noqa: E402

CLI = str(Path(sys.executable).parent / "agentic-codemod")


def tool_env(tmp: Path, cache: Path) -> dict[str, str]:
    """The environment of the tool's processes: bytecode in a private prefix (see the module docstring)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(AGNO_TELEMETRY="false", CODEMOD_CACHE_DIR=str(cache), PYTHONPYCACHEPREFIX=str(tmp / "pyc"))
    return env


def offline_run(
    tmp: Path, name: str, wheelhouse: Path, cache: Path, importtime: bool = False, config: Path | None = None
) -> tuple[float, Path, str]:
    """One offline fixture run: wall seconds, run dir, and (importtime) its `-X importtime` report."""
    repo = tmp / f"{name}-repo"
    materialize(ROOT / "fixtures" / "acme-app", repo)
    run_dir = tmp / f"{name}-run"
    python = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "agentic_codemod"]
    argv = [*python, "run", "--repo", str(repo), "--task", str(ROOT / "fixtures/tasks/acme-sdk-2-rules.yml")]
    argv += ["--offline", "--run-dir", str(run_dir), "--find-links", str(wheelhouse), "--no-index", "--quiet"]
    argv += ["--config", str(config)] if config is not None else []
    start = time.perf_counter()
    env = tool_env(tmp, cache)
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    manifest = run_dir / "run.json"
    status = json.loads(manifest.read_text())["status"] if manifest.is_file() else "no run.json"
    if proc.returncode != 0 or status != "succeeded":
        said = "\n".join(line for line in proc.stderr.splitlines() if not line.startswith("import time:"))
        raise SystemExit(
            f"bench/overhead.py: the fixture run failed (exit {proc.returncode}, {status}):\n"
            f"  {' '.join(argv)}\n{proc.stdout[-2000:]}{said[-3000:]}"
        )
    return wall, run_dir, proc.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one cold run, no sandbox pairs: a smoke run")
    parser.add_argument("--runs", type=int, default=5, help="measured warm runs; the ratio is their median")
    args = parser.parse_args()
    runs = 1 if args.quick else max(1, args.runs)
    wheelhouse = build_wheelhouse(ROOT / "fixtures" / ".wheelhouse")
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        cache = Path(tmp) / "cache"
        if args.quick:  # one cold run, which also gives the imports
            first = offline_run(Path(tmp), "measured", wheelhouse, cache, importtime=True)
            measured, stderr = [_measured(*first[:2])], first[2]
        else:
            offline_run(Path(tmp), "warm-up", wheelhouse, cache)  # builds the environment template, bytecode
            one_after = Path(tmp) / "one-after-the-other.yml"
            one_after.write_text("concurrent_baseline: false\n")
            measured, sequential = [], []
            for i in range(runs):  # alternating, so that both see the same machine
                measured.append(_measured(*offline_run(Path(tmp), f"run-{i}", wheelhouse, cache)[:2]))
                sequential.append(
                    _measured(*offline_run(Path(tmp), f"seq-{i}", wheelhouse, cache, config=one_after)[:2])
                )
            stderr = offline_run(Path(tmp), "imports", wheelhouse, cache, importtime=True)[2]
        measured.sort(key=lambda m: m[0] / m[1])
        wall, verification, run_dir, manifest, kinds, tests_wall = measured[len(measured) // 2]  # median
        ratios = [m[0] / m[1] for m in measured]
        ratio = wall / verification
        one_after_the_other = None if args.quick else sorted(sequential, key=lambda m: m[0] / m[1])
        sandbox_cost = None if args.quick else _sandbox_cost(run_dir)
        env = tool_env(Path(tmp), cache)
        interpreter = _median_wall([sys.executable, "-c", "pass"], env, 1 if args.quick else 5)
        startup = _median_wall([CLI, "--help"], env, 1 if args.quick else 5)
    print(f"offline run: status {manifest['status']}, installs {manifest.get('installs')}")
    print(f"run wall time          {wall:8.2f} s{'  (cold cache)' if args.quick else '  (warm cache)'}")
    print(f"test runs              {verification:8.2f} s ({len(manifest['verifications'])} runs)")
    spread = f"  (median of {runs} runs: {', '.join(f'{r:.2f}' for r in ratios)})" if runs > 1 else ""
    print(f"overhead ratio         {ratio:8.2f} x{spread}")
    print(f"test runs, wall        {tests_wall:8.2f} s (overlaps counted once: baseline beside bump)")
    if one_after_the_other is not None:
        seq = one_after_the_other[len(one_after_the_other) // 2]
        walls = sorted(m[0] for m in one_after_the_other)
        print(
            f"one after the other    {seq[0]:8.2f} s against {seq[1]:.2f} s of tests, {seq[0] / seq[1]:.2f}x "
            f"(concurrent_baseline: false, alternating runs; median wall {statistics.median(walls):.2f} s "
            f"against {statistics.median(sorted(m[0] for m in measured)):.2f} s beside)"
        )
    _breakdown(wall, manifest, kinds)
    _imports(interpreter, stderr)
    print(f"--help start-up        {startup * 1000:8.0f} ms (median of {1 if args.quick else 5})")
    if sandbox_cost is not None:
        box, copy = sandbox_cost
        print(f"sandbox per verification {box:6.3f} s (bwrap box vs plain process, median of {PAIRS} pairs)")
        print(f"disposable copy          {copy:6.3f} s (per verification, median)")


Measured = tuple[float, float, Path, dict[str, Any], dict[str, float], float]


def _measured(wall: float, run_dir: Path) -> Measured:
    """(wall, seconds of its test runs, run dir, run.json, seconds by kind of process, the test runs' wall)
    of one offline run, read while its run dir is there."""
    manifest = json.loads((run_dir / "run.json").read_text())
    tests = run_times.test_runs(run_dir)
    if not tests.summed:
        raise SystemExit(f"bench/overhead.py: the run in {run_dir} recorded no test run")
    return wall, tests.summed, run_dir, manifest, run_times.by_kind(run_dir), tests.wall


def _breakdown(wall: float, manifest: dict[str, Any], kinds: dict[str, float]) -> None:
    """Seconds per phase: outside the workflow, each step, and the processes inside them."""
    steps = [s for s in manifest["steps"] if "duration_s" in s]
    inside = sum(s["duration_s"] for s in steps)
    print("by phase:")
    print(f"  {'before/after the workflow (interpreter, imports, artifacts)':58} {wall - inside:6.2f} s")
    for step in steps:
        print(f"  {'step ' + step['step']:58} {step['duration_s']:6.2f} s")
    for kind, seconds in sorted(kinds.items()):
        print(f"  {'  of which ' + kind:58} {seconds:6.2f} s")


def _median_wall(argv: list[str], env: dict[str, str], times: int) -> float:
    walls = []
    for _ in range(times):
        t0 = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=True)
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls)


def _imports(interpreter: float, importtime: str) -> None:
    """The interpreter and imports slice: a bare interpreter's start, then every import of the measured run by
    top-level package (self times from -X importtime; they add up to the run's whole import time)."""
    by_package: dict[str, float] = {}
    for line in importtime.splitlines():
        if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
            continue
        own, _cumulative, name = line[len("import time:") :].split("|", 2)
        package = name.strip().split(".", 1)[0]
        if package.startswith("_jinja2_module_templates_"):  # report/compiled/ (jinja2's ModuleLoader)
            package = "agentic_codemod"
        by_package[package] = by_package.get(package, 0.0) + int(own) / 1e6
    total = sum(by_package.values())
    print("interpreter and imports (one more run, under -X importtime; imports overlap the phases above):")
    print(f"  {'interpreter start (python -c pass)':58} {interpreter:6.2f} s")
    print(f"  {'imports, all (-X importtime self times)':58} {total:6.2f} s")
    named = ("agno", "agentic_codemod", "pydantic", "pydantic_core", "jinja2", "rich", "yaml", "packaging")
    for package in named:
        print(f"  {'  of which ' + package:58} {by_package.get(package, 0.0):6.2f} s")
    rest = total - sum(by_package.get(p, 0.0) for p in named)
    print(f"  {'  of which everything else (stdlib, other libraries)':58} {rest:6.2f} s")


PAIRS = 7


def _sandbox_cost(run_dir: Path) -> tuple[float, float] | None:
    from agentic_codemod.config import Budgets
    from agentic_codemod.tools import repo_copy
    from agentic_codemod.tools.sandbox import Box, Mount, probe
    from agentic_codemod.tools.verification import SandboxRunner

    if probe() is not None:
        print(f"sandbox: cannot start here ({probe()})")
        return None
    env_dir, copy = run_dir / "env-after", run_dir / "bench-copy"  # where the candidate was tested
    if not env_dir.is_dir():  # one after the other: the bump installed into the baseline's
        env_dir = run_dir / "env"
    argv = [str(env_dir / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}  # as in a run
    runner = SandboxRunner(env=env, tail_bytes=4000)
    boxed: list[float] = []
    plain: list[float] = []
    copies: list[float] = []
    for i in range(PAIRS):
        order = (("sandbox", boxed), ("process", plain))
        for isolation, sink in order if i % 2 else order[::-1]:  # alternate which goes first
            t0 = time.perf_counter()
            repo_copy.fresh_copy(run_dir / "worktree", copy)
            copies.append(time.perf_counter() - t0)
            box = Box(
                isolation,  # type: ignore[arg-type]
                copy,
                (Mount(env_dir),),
                memory_bytes=Budgets().sandbox_memory_bytes,  # prlimit, as in a run
                home=run_dir / "home",
                tmp=run_dir / "tmp",
            )
            result = runner.boxed(box)(argv, cwd=copy, timeout_s=120)
            sink.append(result.duration_s if result.ok else float("nan"))
    return statistics.median(b - p for b, p in zip(boxed, plain, strict=True)), statistics.median(copies)


if __name__ == "__main__":
    main()
