"""Local fleet throughput: repositories per minute with --jobs 1 and --jobs 2, and the ratio.

    .venv/bin/python bench/fleet.py [--repos N] [--kinds ok,no-sdk,...]

Generates N copies of the acme-app fixture (tests/fleet/fleet_repos.py), runs the rule-fixable task over
them with `agentic-codemod fleet --local`, once per job count, each in a fresh fleet directory (no resume).
Needs the installed context (scripts/bootstrap.sh). Not a test: it prints figures, and stops with the
command's output when the fleet command itself fails (bad input, a crash, no fleet.json).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fleet"))
sys.path.insert(0, str(ROOT / "fixtures"))

from fleet_repos import TASK, VARIANTS, make_fleet  # noqa: E402
from wheelhouse import build_wheelhouse  # noqa: E402

FLEET_OUTCOMES = (0, 1, 3, 75)  # `fleet --local` exit codes that come with a fleet.json


def run(fleet: Path, out: Path, jobs: int) -> tuple[float, dict[str, int]]:
    argv = [
        sys.executable,
        "-m",
        "agentic_codemod.fleet.cli",
        "fleet",
        "--task",
        str(TASK),
        "--repos",
        str(fleet),
        "--local",
        "--jobs",
        str(jobs),
        "--fleet-dir",
        str(out),
        "--context",
        str(ROOT),
    ]
    start = time.monotonic()
    done = subprocess.run(
        argv, cwd=ROOT, env={**os.environ, "AGNO_TELEMETRY": "false"}, capture_output=True, text=True
    )
    wall = time.monotonic() - start
    report_file = out / "fleet.json"
    if done.returncode not in FLEET_OUTCOMES or not report_file.is_file():
        # 2 (bad input), a traceback or a missing report: the figures would mean nothing
        raise SystemExit(
            f"bench/fleet.py: the fleet command failed (exit {done.returncode}):\n"
            f"  {' '.join(argv)}\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )
    report = json.loads(report_file.read_text())
    tally: dict[str, int] = {}
    for entry in report["repos"]:
        tally[entry["status"]] = tally.get(entry["status"], 0) + 1
    return wall, tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=6, help="repositories to generate (default 6)")
    parser.add_argument(
        "--kinds", default="ok", help=f"comma-separated variants to cycle ({', '.join(VARIANTS)})"
    )
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    wheels = Path(build_wheelhouse(ROOT / "fixtures" / ".wheelhouse"))
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        fleet = make_fleet(Path(tmp), [kinds[i % len(kinds)] for i in range(args.repos)], wheels)
        warm = make_fleet(Path(tmp) / "warm-up", kinds[:1], wheels)
        run(warm, Path(tmp) / "out-warm-up", 1)  # fills pip's and the OS caches so that order does not matter
        rates = {}
        for jobs in (1, 2):
            wall, tally = run(fleet, Path(tmp) / f"out-{jobs}", jobs)
            rates[jobs] = args.repos / wall * 60
            print(
                f"--jobs {jobs}: {args.repos} repos in {wall:6.1f}s = {rates[jobs]:5.1f} repos/min  {tally}"
            )
        print(f"ratio (--jobs 2 / --jobs 1): {rates[2] / rates[1]:.2f}x on {os.cpu_count()} CPU(s)")


if __name__ == "__main__":
    main()
