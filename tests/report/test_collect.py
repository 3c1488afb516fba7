"""The GitLab fleet's collector: fleet.json and fleet.html from the runs its run jobs kept under
codemod-fleet/<repository>/, and the child pipeline job that calls it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from browser import Browser
from report_runs import TASK, Runs

from agentic_codemod.cli import main
from agentic_codemod.fleet.emit import child_pipeline
from agentic_codemod.fleet.repos import load_fleet


def _as_run_jobs_leave_it(runs: Runs, dest: Path) -> Path:
    """What each run job copies (the CI template's run job): run.json, plan.json, report.html."""
    kept = {e["name"]: Path(e["run_dir"]) for e in runs.fleet["repos"]} | {"acme-full": runs.full}
    for repo, run_dir in kept.items():
        (dest / repo).mkdir(parents=True)
        for name in ("run.json", "plan.json", "report.html"):
            shutil.copy(run_dir / name, dest / repo / name)
    return dest


def test_collector_writes_fleet_json_and_html(runs: Runs, tmp_path: Path, browser: Browser) -> None:
    fleet_dir = _as_run_jobs_leave_it(runs, tmp_path / "codemod-fleet")
    names = [e["name"] for e in runs.fleet["repos"]] + ["acme-full", "vanished"]
    argv = ["report", "--collect", str(fleet_dir), "--expect", "\n".join(names), "--task", str(TASK)]
    assert main(argv) == 0
    report = json.loads((fleet_dir / "fleet.json").read_text())
    statuses = {e["name"]: e["status"] for e in report["repos"]}
    assert statuses == {
        **{e["name"]: e["status"] for e in runs.fleet["repos"]},
        "acme-full": "requires_human",
        "vanished": "crashed",
    }
    assert report["task_id"] == "acme-sdk-2, acme-sdk-2-rules"
    dom = browser.open(fleet_dir / "fleet.html").dom()
    assert dom.text("outcome").startswith("6 repositories: 1 done, 2 need a human, 1 paused, 2 failed")
    assert len(dom.rows("repos")) == 6
    links = [unquote(e.attrs["href"]) for e in dom.all("a") if ("table", "repos") in e.inside]
    assert sorted(links) == sorted(f"{name}/report.html" for name in names[:-1])
    assert "no run.json: the run job left no evidence" in dom.text("repos")
    # The human items by rule and file: the full task's ACME900 in reports.py is the SDK owner's next rule.
    human = {r.attrs["data-rule"]: r.attrs["data-file"] for r in dom.rows("human-table")}
    assert human["ACME900"] == "src/acme_app/reports.py"


def test_collector_refuses_a_name_that_leaves_the_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--collect", str(tmp_path), "--expect", "../etc"]) == 2
    assert "not a repository name: '../etc'" in capsys.readouterr().err


def test_child_pipeline_ends_with_the_collector(tmp_path: Path) -> None:
    fleet_file = tmp_path / "fleet.yml"
    repos = "[{name: billing, project: shop/billing}, {name: orders, project: shop/orders}]"
    fleet_file.write_text(f"repos: {repos}")
    child = child_pipeline(load_fleet(fleet_file), "tasks/acme.yml")
    job = child["codemod:fleet:report"]
    assert job["extends"] == ".codemod:fleet:report" and "needs" not in job  # stage order: any fleet size
    assert job["variables"]["CODEMOD_FLEET_NAMES"] == {"value": "billing\norders", "expand": False}
    hidden = child[".codemod:fleet:report"]
    assert hidden["stage"] == "deploy" and hidden["when"] == "always"
    assert any("agentic-codemod report --collect codemod-fleet" in line for line in hidden["script"])
    assert "codemod-fleet/fleet.html" in hidden["artifacts"]["paths"]
    run = child["codemod:run:billing"]
    assert run["variables"]["CODEMOD_REPO_NAME"] == {"value": "billing", "expand": False}
    assert "codemod-fleet/" in child[".codemod:run"]["artifacts"]["paths"]
