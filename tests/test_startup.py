"""The command line defers garbage collection while its modules load and collects again before the
workflow runs (startup.py); cli.main called in a process of its own leaves the collector alone."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from agentic_codemod.cli import main

ROOT = Path(__file__).resolve().parents[1]

# Runs `agentic-codemod run` through cli.entry, noting the collector when the run handler starts and
# when the workflow starts; prints what it saw when the process exits.
_SPY = """
import atexit, gc, json, sys
from agentic_codemod import cli
import agentic_codemod.workflow.pipeline as pipeline
seen = {"at_start": gc.isenabled()}
atexit.register(lambda: print(json.dumps(seen)))
handler, workflow = cli._run, pipeline.run_workflow
def run_handler(args):
    seen["handler"] = gc.isenabled()
    return handler(args)
def run_workflow(state, brain):
    seen["workflow"] = gc.isenabled()
    seen["frozen"] = gc.get_freeze_count()
    return workflow(state, brain)
cli._run, pipeline.run_workflow = run_handler, run_workflow
sys.argv = ["agentic-codemod", *sys.argv[1:]]
cli.entry()
"""


def _git_repo(path: Path) -> Path:
    path.mkdir()
    (path / "README.md").write_text("nothing to migrate here\n")
    commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]
    for args in (["init", "-q"], ["add", "."], commit):
        subprocess.run(["git", *args], cwd=path, check=True)
    return path


def _run_args(tmp_path: Path) -> list[str]:
    repo = _git_repo(tmp_path / "repo")
    task = ROOT / "fixtures" / "tasks" / "acme-sdk-2-rules.yml"
    return ["run", "--repo", str(repo), "--task", str(task), "--offline", "--quiet",
            "--run-dir", str(tmp_path / "run"), "--context", str(ROOT)]  # fmt: skip


def test_entry_defers_collection_until_the_workflow_modules_are_in(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _SPY, *_run_args(tmp_path)], capture_output=True, text=True, cwd=ROOT
    )
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0, proc.stderr  # nothing to do: the repository has no acme-sdk
    assert (tmp_path / "run" / "run.json").is_file()
    assert seen["at_start"] is True
    assert seen["handler"] is False  # deferred while the run's modules load
    assert seen["workflow"] is True and seen["frozen"] > 10_000  # on again, the modules' objects frozen


def test_entry_collects_again_for_every_other_command(tmp_path: Path) -> None:
    script = (
        "import gc, sys\nfrom agentic_codemod import cli, startup\nstartup.defer()\n"
        "code = cli.main(['report', '--run-dir', sys.argv[1]])\nprint(gc.isenabled(), code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "no-run")], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.stdout.split() == ["True", "2"], proc.stderr


def test_main_in_a_process_of_its_own_leaves_the_collector_alone(tmp_path: Path) -> None:
    frozen = gc.get_freeze_count()
    code = main(_run_args(tmp_path))
    assert code == 0 and (tmp_path / "run" / "run.json").is_file()  # nothing to do, said by its workflow
    assert gc.isenabled() and gc.get_freeze_count() == frozen
