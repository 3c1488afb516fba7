"""How much the pipeline costs on top of the repository's own tests, and how fast the CLI starts.

Prints, for the acme-app fixture in offline mode (rule-fixable task):
  - wall time of the whole run vs. the wall time of its verification runs alone, as a ratio;
  - `agentic-codemod --help` start-up time (median of several runs).
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


if __name__ == "__main__":
    main()
