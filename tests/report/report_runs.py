"""Real runs for the report pages (imported by name): a local fleet of four generated repositories
(approved, pre-existing failure, package index down, hostile names) and the full acme task offline.

The hostile repository plants script tags and event handlers in a file name (which reaches the diff, the
trace and the MR text) and in a test id (which reaches the test table); `plant` copies its run, adds more
in the trace, the MR text, the reason, the steps, the environments, the APM packages and the review, then
writes the page again.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).parents[1] / "fleet"))
from fixtures_support import materialize
from fleet_repos import ACME_APP, ROOT, TASK, VARIANTS, make_repo

from agentic_codemod.cli import main

# Each payload, if it ran, would mark the page's root element (and log PWNED).
PAYLOADS = (
    "<script>document.documentElement.setAttribute('data-pwned','script');console.log('PWNED')</script>",
    "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">",
    "\"><svg onload=\"document.documentElement.setAttribute('data-pwned','svg')\">",
    "'><iframe srcdoc=\"<script>parent.document.documentElement.setAttribute('data-pwned','frame')"
    '</script>"></iframe>',
    "</pre></td></tr></table><script>document.documentElement.setAttribute('data-pwned','out')</script>",
    "javascript:document.documentElement.setAttribute('data-pwned','href')",
)
HOSTILE_FILE = (
    "src/acme_app/x<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','f')\">.py"
)
HOSTILE_TEST_ID = "<script>document.documentElement.setAttribute('data-pwned','test')</script>"
HOSTILE_TEST = f"""import acme
import pytest


@pytest.mark.parametrize("case", [1], ids=[{HOSTILE_TEST_ID!r}])
def test_pinned_major(case):
    assert acme.__version__.startswith("1.")
"""


FIXED_TEST = """import acme


def test_needs_the_new_major():
    assert acme.__version__.startswith("2.")
"""
FIXED_ID = "tests.test_fixed_by_bump::test_needs_the_new_major"


@dataclass
class Runs:
    fleet_dir: Path
    fleet: dict[str, Any]  # fleet.json
    full: Path  # the full acme task (acme-sdk-2.yml) offline: requires a human
    full_code: int

    def run_dir(self, name: str) -> Path:
        return Path(next(e for e in self.fleet["repos"] if e["name"] == name)["run_dir"])


def make_runs(home: Path, wheels: Path, context_root: Path) -> Runs:
    repos = []
    for kind in ("ok", "pre-existing-failure", "endpoint-down"):
        make_repo(kind, home / "repos" / kind)
        repos.append({"name": kind, "path": f"repos/{kind}", **VARIANTS[kind][1]})
    _hostile_repo(home / "repos" / "hostile")
    repos.append({"name": "hostile", "path": "repos/hostile"})
    fleet_file = home / "fleet.yml"
    defaults = {"offline": True, "find_links": [str(wheels)], "no_index": True}
    fleet_file.write_text(yaml.safe_dump({"defaults": defaults, "repos": repos}), encoding="utf-8")
    out = home / "fleet"
    argv = ["fleet", "--task", str(TASK), "--repos", str(fleet_file), "--local", "--jobs", "2"]
    with contextlib.redirect_stdout(io.StringIO()):
        main([*argv, "--fleet-dir", str(out), "--context", str(context_root)])
    acme = home / "acme-app"
    materialize.materialize(ACME_APP, acme)
    full = home / "full"
    code = main(
        [
            "run",
            "--repo",
            str(acme),
            "--task",
            str(ROOT / "fixtures" / "tasks" / "acme-sdk-2.yml"),
            "--run-dir",
            str(full),
            "--context",
            str(context_root),
            "--offline",
            "--quiet",
            "--find-links",
            str(wheels),
            "--no-index",
        ]
    )
    return Runs(out, json.loads((out / "fleet.json").read_text()), full, code)


def _hostile_repo(dest: Path) -> None:
    src = dest.parent / ".hostile-src"
    shutil.copytree(ACME_APP, src, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (src / HOSTILE_FILE).write_text("from acme import errors\n\nNotFound = errors.NotFound\n")
    (src / "tests" / "test_hostile.py").write_text(HOSTILE_TEST)
    (src / "tests" / "test_fixed_by_bump.py").write_text(FIXED_TEST)  # red on 1.4, green on 2.0
    materialize.materialize(src, dest)
    shutil.rmtree(src)


def plant(runs: Runs, dest: Path) -> Path:
    """A copy of the hostile run with payloads in every kind of field the page shows, page rewritten."""
    skip = shutil.ignore_patterns("env", "worktree", "sandbox")
    shutil.copytree(runs.run_dir("hostile"), dest, ignore=skip)
    lines = [
        {
            "seq": 9000 + i,
            "time": p,
            "actor": p,
            "tool": p,
            "arguments": {p: p},
            "result": p,
            "decision": p,
            "reason": p,
        }
        for i, p in enumerate(PAYLOADS)
    ]
    with (dest / "trace.jsonl").open("a", encoding="utf-8") as trace:
        trace.writelines(json.dumps(line) + "\n" for line in lines)
    mr = dest / "merge_request.md"
    mr.write_text(mr.read_text() + "\n" + "\n".join(PAYLOADS) + "\n")
    manifest = json.loads((dest / "run.json").read_text())
    manifest["reason"] = " ".join(PAYLOADS)
    manifest["steps"].append({"step": PAYLOADS[0], "result": PAYLOADS[1], "duration_s": 0.5})
    manifest["environments"]["after"][PAYLOADS[2]] = PAYLOADS[3]
    manifest["apm"].setdefault("packages", []).append({"name": PAYLOADS[4], "version": PAYLOADS[5]})
    manifest["locked"] = {PAYLOADS[0]: {PAYLOADS[1]: {"locked": [PAYLOADS[2]], "tested": PAYLOADS[3]}}}
    manifest["lock_formats"] = {PAYLOADS[4]: {"before": PAYLOADS[5], "after": PAYLOADS[0]}}
    (dest / "run.json").write_text(json.dumps(manifest))
    review = json.loads((dest / "review.json").read_text())
    review["summary"] = PAYLOADS[1]
    review["findings"].append({"severity": "error", "message": PAYLOADS[0], "path": PAYLOADS[2]})
    (dest / "review.json").write_text(json.dumps(review))
    assert main(["report", "--run-dir", str(dest)]) == 0
    return dest
