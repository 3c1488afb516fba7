"""How much the pipeline costs on top of the repository's own tests, and how fast the CLI starts.

Prints, for the acme-app fixture in offline mode (rule-fixable task):
  - wall time of the whole run vs. the wall time of its verification runs alone, as a ratio;
  - `agentic-codemod --help` start-up time (median of several runs);
  - what the sandbox adds per verification: the fixture's test command in the bubblewrap box vs. as a
    plain process (paired runs, median difference), and the disposable copy made before each run.
Not a test: it prints figures and asserts nothing about time.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fixtures"))

from materialize import materialize  # noqa: E402
from wheelhouse import build_wheelhouse  # noqa: E402

CLI = str(Path(sys.executable).parent / "agentic-codemod")


def main() -> None:
    wheelhouse = build_wheelhouse(ROOT / "fixtures" / ".wheelhouse")
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        repo = Path(tmp) / "acme-app"
        materialize(ROOT / "fixtures" / "acme-app", repo)
        run_dir = Path(tmp) / "run"
        start = time.perf_counter()
        proc = subprocess.run(
            [
                CLI,
                "run",
                "--repo",
                str(repo),
                "--task",
                str(ROOT / "fixtures/tasks/acme-sdk-2-rules.yml"),
                "--offline",
                "--run-dir",
                str(run_dir),
                "--find-links",
                str(wheelhouse),
                "--no-index",
                "--quiet",
            ],
            cwd=ROOT,
            check=False,
        )
        wall = time.perf_counter() - start
        manifest = json.loads((run_dir / "run.json").read_text())
        sandbox_cost = _sandbox_cost(run_dir)
    verification = sum(v["duration_s"] for v in manifest["verifications"])
    startup = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([CLI, "--help"], capture_output=True, check=True)
        startup.append(time.perf_counter() - t0)
    print(f"offline run: exit {proc.returncode}, status {manifest['status']}")
    print(f"run wall time          {wall:8.2f} s")
    print(f"verification runs      {verification:8.2f} s ({len(manifest['verifications'])} runs)")
    print(f"overhead ratio         {wall / verification if verification else float('nan'):8.2f} x")
    print(f"--help start-up        {statistics.median(startup) * 1000:8.0f} ms (median of 5)")
    if sandbox_cost is not None:
        box, copy = sandbox_cost
        print(f"sandbox per verification {box:6.3f} s (bwrap box vs plain process, median of {PAIRS} pairs)")
        print(f"disposable copy          {copy:6.3f} s (per verification, median)")


PAIRS = 7


def _sandbox_cost(run_dir: Path) -> tuple[float, float] | None:
    from agentic_codemod.config import Budgets
    from agentic_codemod.tools import repo_copy
    from agentic_codemod.tools.sandbox import Box, Mount, probe
    from agentic_codemod.tools.verification import SandboxRunner

    if probe() is not None:
        print(f"sandbox: cannot start here ({probe()})")
        return None
    env_dir, copy = run_dir / "env", run_dir / "bench-copy"
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
