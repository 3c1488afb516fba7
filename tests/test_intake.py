"""Bad input exits 2 with one line naming the file and the field; nothing is written."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from agentic_codemod.cli import main

VALID = {
    "id": "acme-sdk-2",
    "title": "Migrate acme-sdk",
    "sdk": {"name": "acme-sdk", "ecosystem": "python", "from": ">=1,<2", "to": "2.1.0"},
    "migration": {"package": "acme-sdk-2-migration", "skill": "acme-sdk-2-migration"},
    "allowed_paths": ["src/**"],
    "acceptance_criteria": ["tests pass"],
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("x\n")
    for args in (
        ["init", "-q"],
        ["add", "a.txt"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def write_task(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "task.yml"
    path.write_text(yaml.safe_dump(data))
    return path


def run_cli(tmp_path: Path, task: Path, repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    run_dir = tmp_path / "run"
    code = main(["run", "--repo", str(repo), "--task", str(task), "--run-dir", str(run_dir), "--offline"])
    err = capsys.readouterr().err
    assert not run_dir.exists(), "bad input must not start a run"
    return code, err


def mutate(path: str, value: object) -> dict:
    data = yaml.safe_load(yaml.safe_dump(VALID))
    *parents, leaf = path.split(".")
    target = data
    for key in parents:
        target = target[key]
    if value is KeyError:
        del target[leaf]
    else:
        target[leaf] = value
    return data


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("unknown_key", "x", "field 'unknown_key': Extra inputs are not permitted"),
        ("sdk.colour", "x", "field 'sdk.colour'"),
        ("title", KeyError, "field 'title': Field required"),
        ("sdk.to", "two-point-one", "field 'sdk.to'"),
        ("sdk.from", "~~1", "field 'sdk.from'"),
        ("sdk.ecosystem", "cobol", "field 'sdk.ecosystem'"),
        ("id", "Bad Id!", "field 'id'"),
        ("allowed_paths", [], "field 'allowed_paths'"),
        ("budgets", {"max_coffee": 1}, "unknown budget 'max_coffee'"),
    ],
    ids=lambda v: str(v)[:24],
)
def test_bad_task_field_exits_2_naming_file_and_field(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], field: str, value: object, expected: str
) -> None:
    task = write_task(tmp_path, mutate(field, value))
    code, err = run_cli(tmp_path, task, repo, capsys)
    assert code == 2
    assert str(task) in err and expected in err
    assert len(err.strip().splitlines()) == 1


def test_task_that_is_not_yaml_mapping(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = tmp_path / "task.yml"
    task.write_text("- just\n- a list\n")
    code, err = run_cli(tmp_path, task, repo, capsys)
    assert code == 2 and "must be a YAML mapping" in err


def test_missing_task_file(tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(tmp_path, tmp_path / "nope.yml", repo, capsys)
    assert code == 2 and "nope.yml: task file not found" in err


def test_repo_that_is_not_git(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, err = run_cli(tmp_path, write_task(tmp_path, VALID), plain, capsys)
    assert code == 2 and "--repo is not a git repository" in err


def test_repo_subdirectory_is_refused(tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sub = repo / "sub"
    sub.mkdir()
    code, err = run_cli(tmp_path, write_task(tmp_path, VALID), sub, capsys)
    assert code == 2 and "top of the work tree" in err


def test_bad_config_field(tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yml"
    config.write_text("budgets:\n  max_iterations: 0\n")
    run_dir = tmp_path / "run"
    code = main(
        [
            "run",
            "--repo",
            str(repo),
            "--task",
            str(write_task(tmp_path, VALID)),
            "--run-dir",
            str(run_dir),
            "--offline",
            "--config",
            str(config),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and f"{config}: field 'budgets.max_iterations'" in err
    assert not run_dir.exists()


def test_task_budgets_only_narrow() -> None:
    from agentic_codemod.config import DEFAULT_DENY_GLOBS, Settings

    narrowed = Settings().for_task(["secrets/**"], {"max_changed_files": 5, "max_tool_calls": 10**6})
    assert narrowed.budgets.max_changed_files == 5
    assert narrowed.budgets.max_tool_calls == Settings().budgets.max_tool_calls
    assert set(DEFAULT_DENY_GLOBS) <= set(narrowed.deny_globs) and "secrets/**" in narrowed.deny_globs


@pytest.mark.parametrize("flag", ["--task", "--config"])
def test_a_file_that_is_not_text_exits_2_naming_it(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    binary = tmp_path / "binary.yml"
    binary.write_bytes(bytes(range(256)))
    task = binary if flag == "--task" else write_task(tmp_path, VALID)
    argv = ["run", "--repo", str(repo), "--task", str(task), "--run-dir", str(tmp_path / "run"), "--offline"]
    if flag == "--config":
        argv += ["--config", str(binary)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert str(binary) in err and "can't decode" in err
    assert not (tmp_path / "run").exists()


def test_a_context_without_apm_yml_exits_2_naming_it(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "no-context"
    empty.mkdir()
    argv = [
        "run",
        "--repo",
        str(repo),
        "--task",
        str(write_task(tmp_path, VALID)),
        "--run-dir",
        str(tmp_path / "run"),
        "--offline",
        "--context",
        str(empty),
    ]
    assert main(argv) == 2
    assert f"{empty}: --context has no apm.yml" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [
        (["**"], "allows every path"),
        (["*"], "allows every path"),
        (["**/*"], "allows every path"),
        (["./**"], "allows every path"),
        (["src/**", "?*"], "entry 1 '?*' allows every path"),
        (["."], "allows every path"),
        (["/etc/passwd"], "absolute path"),
        (["C:/src/**"], "absolute path"),
        (["src/../../x/**"], "escapes the worktree (..)"),
        (["src/\u202eyp.**"], "bidi character"),
    ],
    ids=lambda v: str(v)[:24],
)
def test_allowed_paths_are_validated_when_the_task_is_loaded(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], allowed: list[str], expected: str
) -> None:
    task = write_task(tmp_path, {**VALID, "allowed_paths": allowed})
    code, err = run_cli(tmp_path, task, repo, capsys)
    assert code == 2
    assert f"{task}: field 'allowed_paths'" in err and expected in err
    assert len(err.strip().splitlines()) == 1


def test_allow_all_paths_true_admits_a_pattern_that_allows_everything(tmp_path: Path) -> None:
    from agentic_codemod.task import load_task

    task = load_task(write_task(tmp_path, {**VALID, "allowed_paths": ["./**"], "allow_all_paths": True}))
    assert task.allow_all_paths and task.allowed_paths == ["**"]


def test_allowed_paths_are_stored_in_their_normalised_spelling(tmp_path: Path) -> None:
    from agentic_codemod.task import load_task

    spelled = ["./src/**", "requirements*.txt", "sub//setup.py"]
    task = load_task(write_task(tmp_path, {**VALID, "allowed_paths": spelled}))
    assert task.allowed_paths == ["src/**", "requirements*.txt", "sub/setup.py"]


def run_dir_cli(repo: Path, task: Path, run_dir: Path, context: Path) -> int:
    argv = ["run", "--repo", str(repo), "--task", str(task), "--run-dir", str(run_dir)]
    return main([*argv, "--context", str(context), "--offline"])


@pytest.mark.parametrize(
    ("where", "relation", "flag"),
    [
        ("repo", "is", "--repo"),
        ("repo/runs/1", "is inside", "--repo"),
        (".", "contains", "--repo"),
        ("link-to-repo", "is", "--repo"),
        ("link-to-repo/out", "is inside", "--repo"),
        ("context", "is", "--context"),
        ("context/apm_modules/x", "is inside", "--context"),
        ("context/.apm/run", "is inside", "--context"),
    ],
)
def test_run_dir_overlapping_repo_or_context_exits_2_naming_both(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], where: str, relation: str, flag: str
) -> None:
    context = tmp_path / "context"
    context.mkdir()
    (context / "apm.yml").write_text("name: ctx\n")
    (tmp_path / "link-to-repo").symlink_to(repo)
    task = write_task(tmp_path, VALID)
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    run_dir = tmp_path / where
    code = run_dir_cli(repo, task, run_dir, context)
    err = capsys.readouterr().err
    assert code == 2
    other = (repo if flag == "--repo" else context).resolve()
    assert f"--run-dir {run_dir} ({run_dir.resolve()}) {relation} {flag}" in err and str(other) in err
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before, "nothing written"


def test_run_dir_beside_repo_and_elsewhere_inside_the_context_is_accepted(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In GitLab CI the context is the project directory and artifacts must be inside it."""
    from agentic_codemod.task import check_run_dir

    context = tmp_path / "context"
    assert check_run_dir(context / "codemod-run", repo, context) == (context / "codemod-run").resolve()
    assert check_run_dir(tmp_path / "run", repo, context) == (tmp_path / "run").resolve()
    assert check_run_dir(tmp_path / "repo-run", repo, context) == (tmp_path / "repo-run").resolve()
