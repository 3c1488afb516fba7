"""A rerun of the same fleet skips what already succeeded for the same task and candidate, and nothing else.

Runs after test_fleet_local.py (file order): it reruns the session's fleet in place.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from fleet_repos import VARIANTS
from fleet_runs import FleetRun, run_fleet

from agentic_codemod.fleet.record import FleetEntry, can_skip


@pytest.fixture(scope="module")
def second_run(first_run: FleetRun, context_root: Path) -> FleetRun:
    return run_fleet(first_run.fleet_file, first_run.fleet_dir, context_root)


def test_a_rerun_skips_the_repositories_that_succeeded(first_run: FleetRun, second_run: FleetRun) -> None:
    before = {e["name"]: e for e in first_run.report["repos"]}
    for e in second_run.report["repos"]:
        if before[e["name"]]["status"] == "succeeded":
            assert e["resumed"] is True and e["run_id"] == before[e["name"]]["run_id"], e["name"]
            assert e["candidate_sha256"] == before[e["name"]]["candidate_sha256"]
            assert e["reason"].startswith("skipped: same task and candidate")
        else:
            assert e["resumed"] is False and e["run_id"] != before[e["name"]]["run_id"], e["name"]
            assert e["status"] == before[e["name"]]["status"]  # the same repository gives the same outcome
    assert "2 skipped as already done" in second_run.out and len(second_run.report["repos"]) == len(VARIANTS)


def test_another_task_file_never_reuses_an_earlier_success(second_run: FleetRun, tmp_path: Path) -> None:
    entry = FleetEntry.model_validate(next(e for e in second_run.report["repos"] if e["name"] == "ok"))
    same = second_run.report["task_sha256"]
    repo = Path(entry.repo)
    assert can_skip(entry, same, same, repo) is not None
    assert can_skip(entry, "another task", same, repo) is None


def test_a_repository_with_new_commits_runs_again(
    second_run: FleetRun, fleet_home: Path, context_root: Path, tmp_path: Path
) -> None:
    repo = fleet_home / "repos" / "ok-docs"
    (repo / "NOTES.md").write_text("a new commit on the base branch\n")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    subprocess.run(["git", "add", "NOTES.md"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "notes"], cwd=repo, check=True, env=env)
    subset = fleet_home / "fleet-ok.yml"
    fleet = yaml.safe_load(second_run.fleet_file.read_text())
    fleet["repos"] = [r for r in fleet["repos"] if r["name"] in ("ok", "ok-docs")]
    subset.write_text(yaml.safe_dump(fleet))
    third = run_fleet(subset, second_run.fleet_dir, context_root)

    by_name = {e["name"]: e for e in third.report["repos"]}
    assert set(by_name) == {"ok", "ok-docs"}
    assert by_name["ok"]["resumed"] is True
    assert by_name["ok-docs"]["resumed"] is False
    assert by_name["ok-docs"]["status"] == "succeeded", by_name["ok-docs"]["reason"]
    assert third.code == 0
