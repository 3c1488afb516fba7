"""`fleet --emit-gitlab-pipeline`: one run -> manual gate -> publish chain per repository, self-contained."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from fleet_runs import fleet_cli

from agentic_codemod.errors import EXIT_BAD_INPUT
from agentic_codemod.fleet.emit import TEMPLATE, child_pipeline, raw_job, template_jobs
from agentic_codemod.fleet.repos import load_fleet

NAMES = ["billing", "orders", "inventory", "reports", "search", "gateway"]


@pytest.fixture
def fleet_file(tmp_path: Path) -> Path:
    repos: list[dict[str, object]] = [
        {"name": n, "project": f"shop/{n}", "path": f"repos/{n}"} for n in NAMES
    ]
    repos[1].update(target_branch="develop", ref="develop")
    repos[2].update(index_url="https://pypi.example/simple", no_index=False)
    path = tmp_path / "fleets" / "fleet.yml"
    path.parent.mkdir()
    path.write_text(
        yaml.safe_dump(
            {"defaults": {"offline": True, "find_links": ["../wheels"], "no_index": True}, "repos": repos}
        )
    )
    return path


@pytest.fixture
def child(fleet_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.chdir(tmp_path)  # the emitting job's working directory is the project root
    monkeypatch.setenv("CODEMOD_IMAGE", "registry.example/python:3.11-git")
    assert (
        fleet_cli(
            "--task", "tasks/acme.yml", "--repos", str(fleet_file), "--emit-gitlab-pipeline", "child.yml"
        )
        == 0
    )
    return yaml.safe_load((tmp_path / "child.yml").read_text())


def test_one_chain_per_repository(child: dict[str, Any]) -> None:
    chains = [k for k in child if k.startswith("codemod:run:")]
    assert chains == [f"codemod:run:{n}" for n in NAMES]
    for name in NAMES:
        run, gate, publish = (child[f"codemod:{s}:{name}"] for s in ("run", "gate", "publish"))
        assert run["extends"] == ".codemod:run" and run["needs"] == ["codemod:context"]
        assert gate["when"] == "manual" and gate["allow_failure"] is False
        assert gate["needs"] == [{"job": f"codemod:run:{name}", "artifacts": True}]
        assert publish["needs"] == [
            {"job": f"codemod:run:{name}", "artifacts": True},
            {"job": f"codemod:gate:{name}", "artifacts": False},
        ]
        assert publish["resource_group"] == f"codemod-publish-{name}"
        assert run["variables"]["CODEMOD_PROJECT"] == {"value": f"shop/{name}", "expand": False}
    assert child["codemod:context"] == {"extends": ".codemod:context"}


def values(variables: dict[str, Any]) -> dict[str, str]:
    assert all(v["expand"] is False for v in variables.values()), variables  # GitLab expands no `$`
    return {k: v["value"] for k, v in variables.items()}


def test_each_repository_keeps_its_own_settings(child: dict[str, Any]) -> None:
    billing = values(child["codemod:run:billing"]["variables"])
    assert billing["CODEMOD_FIND_LINKS"] == "wheels"  # relative to the job's cwd
    assert (billing["CODEMOD_OFFLINE"], billing["CODEMOD_NO_INDEX"], billing["CODEMOD_INDEX_URL"]) == (
        "true",
        "true",
        "",
    )
    assert billing["CODEMOD_TARGET_BRANCH"] == "main" and billing["CODEMOD_REF"] == ""
    assert "CODEMOD_RUN_ARGS" not in billing and "CODEMOD_RUN_ARGS" not in child["variables"]
    orders = values(child["codemod:publish:orders"]["variables"])
    assert (orders["CODEMOD_REF"], orders["CODEMOD_TARGET_BRANCH"]) == ("develop", "develop")
    inventory = values(child["codemod:run:inventory"]["variables"])
    assert inventory["CODEMOD_INDEX_URL"] == "https://pypi.example/simple"
    assert inventory["CODEMOD_NO_INDEX"] == "false"


def test_the_child_is_self_contained(child: dict[str, Any]) -> None:
    _, hidden = template_jobs()
    assert "include" not in child
    for name, body in hidden.items():
        assert child[name] == raw_job(body)  # the job bodies users include from ci/templates
        assert {k: v for k, v in child[name].items() if k != "variables"} == {
            k: v for k, v in body.items() if k != "variables"
        }
    glob = values(child["variables"])
    assert glob["CODEMOD_TASK"] == "tasks/acme.yml"
    assert glob["CODEMOD_FLEET"] == ""
    assert glob["CODEMOD_IMAGE"] == "registry.example/python:3.11-git"  # baked from the emitter
    assert "CODEMOD_PROJECT" not in glob  # its template default ($CI_PROJECT_PATH) is set per repository
    assert child["stages"] == ["build", "test", "deploy"]
    assert TEMPLATE.is_file()


def test_a_repository_without_a_project_cannot_go_to_gitlab(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yml"
    path.write_text("repos: [{name: local-only, path: x}]")
    with pytest.raises(Exception, match="local-only have no `project`"):
        child_pipeline(load_fleet(path), "t.yml")
    assert (
        fleet_cli("--task", "t.yml", "--repos", str(path), "--emit-gitlab-pipeline", str(tmp_path / "c.yml"))
        == EXIT_BAD_INPUT
    )


@pytest.mark.skipif(shutil.which("gitlab-ci-local") is None, reason="gitlab-ci-local (npm) is not installed")
def test_gitlab_ci_local_accepts_the_child_pipeline(child: dict[str, Any], tmp_path: Path) -> None:
    project = tmp_path / "child-project"
    project.mkdir()
    (project / ".gitlab-ci.yml").write_text((tmp_path / "child.yml").read_text())
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t.invalid",
        "HOME": str(tmp_path),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "child"]):
        subprocess.run(["git", *args], cwd=project, check=True, env=env, capture_output=True)
    done = subprocess.run(
        ["gitlab-ci-local", "--list-json"], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    jobs = {j["name"]: j for j in json.loads(done.stdout)}
    assert len(jobs) == 2 + 3 * len(NAMES)  # context, run -> gate -> publish each, the collector
    assert all(jobs[f"codemod:gate:{n}"]["when"] == "manual" for n in NAMES)
