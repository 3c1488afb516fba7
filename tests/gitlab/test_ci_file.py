"""The CI file users adopt: its job graph asserted, its shell run for real, gitlab-ci-local when present."""

from __future__ import annotations

import itertools
import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ci_model import (
    ROOT,
    Reference,
    gitlab_ci_local,
    job,
    load_ci,
    project_copy,
    run_script,
    schema_check,
)

from agentic_codemod.workflow.artifacts import ARTIFACTS

CI = ROOT / ".gitlab-ci.yml"
TEMPLATE = ROOT / "ci" / "templates" / "agentic-codemod.gitlab-ci.yml"
PACKAGED = ROOT / "agentic_codemod" / "fleet" / "agentic-codemod.gitlab-ci.yml"
CHAIN = ["codemod:context", "codemod:run", "codemod:gate", "codemod:publish"]


@pytest.fixture(scope="module")
def ci() -> dict[str, Any]:
    return load_ci(CI)


def needs(j: dict[str, Any]) -> list[str]:
    return [n if isinstance(n, str) else n["job"] for n in j.get("needs", [])]


def test_the_package_ships_the_same_template(ci: dict[str, Any]) -> None:
    assert PACKAGED.read_bytes() == TEMPLATE.read_bytes()


@pytest.mark.parametrize("path", [TEMPLATE, CI], ids=["template", "project"])
def test_gitlab_s_own_schema_accepts_the_ci_files(path: Path, tmp_path: Path) -> None:
    ok, out = schema_check(path)
    assert ok, out
    broken = tmp_path / "broken.gitlab-ci.yml"  # the same file with one job GitLab would refuse
    broken.write_text(path.read_text() + "\nbroken:\n  script: [x]\n  when: sometimes\n")
    ok, out = schema_check(broken)
    assert not ok and "broken" in out, out


def test_merge_request_pipelines_run_the_offline_pass_on_the_fixture(ci: dict[str, Any]) -> None:
    for name in ("test", "offline-pass"):
        rules = job(ci, name)["rules"]
        assert {"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'} in rules, name
    offline = job(ci, "offline-pass")
    assert (ROOT / offline["variables"]["CODEMOD_TASK"]).is_file()
    assert (
        offline["variables"]["CODEMOD_OFFLINE"] == "true" and "CODEMOD_RUN_ARGS" not in offline["variables"]
    )
    assert offline["allow_failure"] is False and offline["retry"] == 0  # a quality gate: exit 0 or red
    assert offline["script"][0] == Reference((".codemod:run", "script"))  # the very job users run
    assert "publish --run-dir codemod-run --check-only" in offline["script"][1]
    assert any(r == {"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'} for r in ci["workflow"]["rules"])


def test_the_codemod_pipeline_is_context_run_gate_publish(ci: dict[str, Any]) -> None:
    stages = ci["stages"]
    for before, after in itertools.pairwise(CHAIN):
        assert before in needs(job(ci, after)), after
        assert stages.index(job(ci, before)["stage"]) <= stages.index(job(ci, after)["stage"])
    for name in CHAIN:
        rules = job(ci, name)["rules"]
        assert rules[0] == {"if": "$CODEMOD_FLEET", "when": "never"} and rules[-1]["if"] == "$CODEMOD_TASK", (
            name
        )
    context = "\n".join(job(ci, "codemod:context")["script"])
    assert "apm install --frozen" in context and "apm audit --ci" in context


def test_the_gate_is_manual_blocking_and_protected(ci: dict[str, Any]) -> None:
    gate = job(ci, "codemod:gate")
    assert gate["rules"][-1] == {"if": "$CODEMOD_TASK", "when": "manual", "allow_failure": False}
    assert gate["allow_failure"] is False
    assert gate["environment"]["name"] == "$CODEMOD_ENVIRONMENT" and ci["variables"]["CODEMOD_ENVIRONMENT"]
    assert gate["script"] == ["agentic-codemod publish --run-dir codemod-run --check-only"]


def test_exit_75_pauses_and_is_retried_exit_3_warns_other_codes_fail(ci: dict[str, Any]) -> None:
    run = job(ci, "codemod:run")
    assert sorted(run["allow_failure"]["exit_codes"]) == [3, 75]
    assert run["retry"] == {"max": 2, "exit_codes": [75]}
    publish = job(ci, "codemod:publish")
    assert publish["allow_failure"] == {"exit_codes": [75]} and publish["retry"]["exit_codes"] == [75]


def test_the_run_job_keeps_the_evidence_and_reports_the_tests(ci: dict[str, Any]) -> None:
    artifacts = job(ci, "codemod:run")["artifacts"]
    assert artifacts["when"] == "always"
    assert artifacts["reports"]["junit"] == "codemod-run/reports/junit-*.xml"
    assert artifacts["expose_as"]
    assert {"codemod-run/report.html", "codemod-run/merge_request.md", "codemod-run/changes.patch"} <= set(
        artifacts["paths"]
    )
    assert not any("$" in p or "*" in p for p in artifacts["paths"])  # expose_as allows neither
    assert {"codemod-run/worktree/**/*", "codemod-run/env/**/*"} <= set(artifacts["exclude"])
    # the bump's environment, the install cache and the boxes' copies are not evidence either
    scratch = {f"codemod-run/{d}/**/*" for d in ("env-after", "install-cache", "sandbox")}
    assert scratch <= set(artifacts["exclude"])


def test_the_publish_job_pushes_only_after_the_gate(ci: dict[str, Any]) -> None:
    publish = job(ci, "codemod:publish")
    assert {"job": "codemod:gate", "artifacts": False} in publish["needs"]
    assert {"job": "codemod:run", "artifacts": True} in publish["needs"]
    assert publish["resource_group"] and publish["environment"]["name"] == "$CODEMOD_ENVIRONMENT"
    script = "\n".join(publish["script"])
    assert "agentic-codemod publish --run-dir codemod-run" in script
    assert "TOKEN" not in script  # the token comes from the environment, never the command line


def test_a_fleet_is_a_generated_child_pipeline(ci: dict[str, Any]) -> None:
    plan, trigger = job(ci, "codemod:fleet:plan"), job(ci, "codemod:fleet")
    assert "--emit-gitlab-pipeline codemod-fleet.yml" in " ".join(plan["script"])
    assert plan["artifacts"]["paths"] == ["codemod-fleet.yml"]
    assert trigger["trigger"]["include"] == [{"artifact": "codemod-fleet.yml", "job": "codemod:fleet:plan"}]
    assert trigger["trigger"]["strategy"] == "depend" and needs(trigger) == ["codemod:fleet:plan"]


# -- the run job's shell, for real ------------------------------------------------------------------

STUB = """#!/bin/sh
mkdir -p codemod-run
printf '{"reason": "%s"}' "$STUB_REASON" > codemod-run/run.json
exit "$STUB_CODE"
"""


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (0, "codemod: ok — all good"),
        (3, "codemod: WARNING requires a human (exit 3): all good"),
        (75, "codemod: PAUSED, environment unavailable (exit 75): all good"),
        (1, "codemod: FAILED (exit 1): all good"),
    ],
)
def test_the_run_script_says_why_in_the_job_log(
    ci: dict[str, Any], tmp_path: Path, code: int, expected: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "agentic-codemod"
    stub.write_text(STUB)
    stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    script = "\n".join(job(ci, "codemod:run")["script"]) + "\necho after-the-run\n"
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "CODEMOD_REPO_DIR": ".",
        "CODEMOD_TASK": "t.yml",
        "CODEMOD_CONTEXT": ".",
        "CODEMOD_OFFLINE": "true",
        "STUB_CODE": str(code),
        "STUB_REASON": "all good",
    }
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == code
    assert expected in done.stdout
    assert ("after-the-run" in done.stdout) == (code == 0)  # later script lines run only on success


HOSTILE_INDEX = "https://x/simple --context /x/evil --config /x/evil.yml"


@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_the_run_flags_reach_the_tool_one_quoted_argument_each(
    ci: dict[str, Any], tmp_path: Path, shell: str
) -> None:
    script = "\n".join(job(ci, "codemod:run")["script"])
    env = {
        "CODEMOD_REPO_DIR": "repo dir",
        "CODEMOD_TASK": "tasks/a b.yml",
        "CODEMOD_CONTEXT": "ctx",
        "CODEMOD_OFFLINE": "true",
        "CODEMOD_NO_INDEX": "false",
        "CODEMOD_INDEX_URL": HOSTILE_INDEX,
        "CODEMOD_CONFIG": "$HOME/*.yml",
        "CODEMOD_FIND_LINKS": "wheels\n\n/opt/my wheels\n`touch pwned`\n-rf",
        "HOME": str(tmp_path),
    }
    ran = run_script(script, env, tmp_path, shell)
    assert ran.code == 0, ran.stderr
    assert ran.argv == [
        "run",
        "--repo=repo dir",
        "--task=tasks/a b.yml",
        "--context=ctx",
        "--run-dir=codemod-run",
        "--offline",
        f"--index-url={HOSTILE_INDEX}",
        "--config=$HOME/*.yml",
        "--find-links=wheels",
        "--find-links=/opt/my wheels",
        "--find-links=`touch pwned`",
        "--find-links=-rf",
    ]
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("CODEMOD_RUN_ARGS", "--offline", "CODEMOD_RUN_ARGS is no longer read"),
        ("CODEMOD_OFFLINE", "yes", "CODEMOD_OFFLINE must be true or false"),
        ("CODEMOD_NO_INDEX", "1", "CODEMOD_NO_INDEX must be true or false"),
    ],
)
def test_the_run_job_refuses_what_it_cannot_pass_safely(
    ci: dict[str, Any], tmp_path: Path, variable: str, value: str, said: str
) -> None:
    script = "\n".join(job(ci, "codemod:run")["script"])
    env = {"CODEMOD_REPO_DIR": ".", "CODEMOD_TASK": "t.yml", "CODEMOD_CONTEXT": ".", variable: value}
    ran = run_script(script, env, tmp_path)
    assert ran.code == 2 and said in ran.stderr, ran.stderr
    assert ran.argv is None  # the tool never ran


@pytest.mark.parametrize("project", ["-oProxyCommand=x/y", "x/y --upload-pack=touch", "x/$(id)", ""])
def test_the_run_job_clones_only_a_project_path(ci: dict[str, Any], tmp_path: Path, project: str) -> None:
    script = "\n".join(job(ci, "codemod:run")["script"])
    env = {"CODEMOD_PROJECT": project, "CI_PROJECT_PATH": "g/self", "CODEMOD_TASK": "t.yml"}
    ran = run_script(script, {**env, "GIT_TRACE": "1"}, tmp_path)
    assert ran.code == 2 and "CODEMOD_PROJECT is not a GitLab project path" in ran.stderr, ran.stderr
    assert "git clone" not in ran.stderr and ran.argv is None


# -- gitlab-ci-local, when it is installed ------------------------------------------------------------

needs_gcl = pytest.mark.skipif(
    gitlab_ci_local() is None, reason="gitlab-ci-local (npm, 4.72.0 on Node 20) or rsync is not installed"
)


@needs_gcl
def test_gitlab_ci_local_validates_the_file_and_lists_the_graph(tmp_path: Path) -> None:
    project = project_copy(tmp_path / "project")
    done = subprocess.run(
        [str(gitlab_ci_local()), "--list-json", "--variable", "CODEMOD_TASK=t.yml"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    jobs = {j["name"]: j for j in json.loads(done.stdout)}
    assert set(CHAIN) <= set(jobs)
    assert jobs["codemod:gate"]["when"] == "manual" and jobs["codemod:gate"]["allow_failure"] is False
    assert jobs["codemod:run"]["allow_failure"] == {"exit_codes": [3, 75]}


@pytest.mark.slow
@needs_gcl
def test_gitlab_ci_local_runs_the_offline_pass_in_the_shell_executor(tmp_path: Path) -> None:
    project = project_copy(tmp_path / "project")
    done = subprocess.run(
        [str(gitlab_ci_local()), "offline-pass", "--force-shell-executor"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "PASS" in done.stdout and "offline-pass" in done.stdout
    exported = project / ".gitlab-ci-local" / "artifacts" / "offline-pass" / "codemod-run"
    files = {p.relative_to(exported).as_posix() for p in exported.rglob("*") if p.is_file()}
    assert set(ARTIFACTS) <= files  # the evidence is kept ...
    assert "report.html" in files  # ... and the auditor's page made from it
    assert not {
        f for f in files if f.split("/")[0] in ("worktree", "env", "home", "tmp")
    }  # ... the clone, venv not
    assert any(f.startswith("reports/junit-") for f in files)
