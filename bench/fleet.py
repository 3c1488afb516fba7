"""Local fleet throughput: repositories per minute and CPU seconds per repository, --jobs 1 and 2.

    .venv/bin/python bench/fleet.py [--repos N] [--kinds ok,no-sdk,...] [--quick] [--keep DIR]

Generates N copies of the acme-app fixture (tests/fleet/fleet_repos.py), runs the rule-fixable task over
them with `agentic-codemod fleet --local`, once per job count, each in a fresh fleet directory (no resume)
and one shared cache (--cache-dir), warmed by a one-repository fleet first. CPU is the user + system time
of the fleet command and everything it waited for (runs, installs, tests), per repository.
Needs the installed context (scripts/bootstrap.sh). Not a test: it prints figures, and stops with the
command's output when the fleet command itself fails (bad input, a crash, no fleet.json, a repository
that did not end as its variant should). --quick: two repositories, no warm-up (CI's smoke run).
--keep DIR: copy the --jobs 2 fleet's output (fleet.json, fleet.html, every run's report.html) to DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
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


def run(fleet: Path, out: Path, jobs: int, cache: Path) -> tuple[float, float, dict[str, int]]:
    """Wall seconds, CPU seconds (this command and its waited-for descendants), statuses."""
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
        "--cache-dir",
        str(cache),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(
        argv, cwd=ROOT, env={**os.environ, "AGNO_TELEMETRY": "false"}, capture_output=True, text=True
    )
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report_file = out / "fleet.json"
    if done.returncode not in FLEET_OUTCOMES or not report_file.is_file():
        # 2 (bad input), a traceback or a missing report: the figures would mean nothing
        raise SystemExit(
            f"bench/fleet.py: the fleet command failed (exit {done.returncode}):\n"
            f"  {' '.join(argv)}\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
        )
    report = json.loads(report_file.read_text())
    tally: dict[str, int] = {}
    wrong = []
    for entry in report["repos"]:
        tally[entry["status"]] = tally.get(entry["status"], 0) + 1
        kind = entry["name"] if entry["name"] in VARIANTS else entry["name"].rsplit("-", 1)[0]
        expected = VARIANTS[kind][2]
        if entry["status"] != expected:
            why = entry.get("reason", "")
            wrong.append(f"{entry['name']}: {entry['status']} ({why}), expected {expected}")
    if wrong:  # a fleet that did not do the work measures nothing
        raise SystemExit("bench/fleet.py: repositories ended wrong:\n  " + "\n  ".join(wrong))
    return wall, cpu, tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=6, help="repositories to generate (default 6)")
    parser.add_argument(
        "--kinds", default="ok", help=f"comma-separated variants to cycle ({', '.join(VARIANTS)})"
    )
    parser.add_argument("--quick", action="store_true", help="two repositories, no warm-up: a smoke run")
    parser.add_argument("--keep", type=Path, help="copy the --jobs 2 fleet's output (fleet.html ...) here")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    repos = 2 if args.quick else args.repos
    wheels = Path(build_wheelhouse(ROOT / "fixtures" / ".wheelhouse"))
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        cache = Path(tmp) / "cache"
        fleet = make_fleet(Path(tmp), [kinds[i % len(kinds)] for i in range(repos)], wheels)
        if not args.quick:  # fills the shared cache and the OS caches so that order does not matter
            run(make_fleet(Path(tmp) / "warm-up", kinds[:1], wheels), Path(tmp) / "out-warm-up", 1, cache)
        rates = {}
        for jobs in (1, 2):
            wall, cpu, tally = run(fleet, Path(tmp) / f"out-{jobs}", jobs, cache)
            rates[jobs] = repos / wall * 60
            print(
                f"--jobs {jobs}: {repos} repos in {wall:6.1f}s = {rates[jobs]:5.1f} repos/min, "
                f"CPU {cpu / repos:5.1f} s per repository  {tally}"
            )
        print(f"ratio (--jobs 2 / --jobs 1): {rates[2] / rates[1]:.2f}x on {os.cpu_count()} CPU(s)")
        if args.keep:
            shutil.copytree(Path(tmp) / "out-2", args.keep, dirs_exist_ok=True, symlinks=True)
            print(f"kept: {args.keep / 'fleet.html'}")


if __name__ == "__main__":
    main()
