"""`verification: {command, requirements, extras}` in the task or the config: bad values exit 2 naming the
file and the field; the task's fields win over the config's; the override reaches a run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from agentic_codemod.cli import main
from agentic_codemod.config import VerificationSettings, load_settings

TASK = {
    "id": "acme-sdk-2",
    "title": "Migrate acme-sdk",
    "sdk": {"name": "acme-sdk", "ecosystem": "python", "from": ">=1,<2", "to": "2.0.0"},
    "migration": {"package": "acme-sdk-2-migration", "skill": "acme-sdk-2-migration"},
    "allowed_paths": ["src/**", "requirements*.txt"],
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


@pytest.mark.parametrize(
    ("verification", "field"),
    [
        ({"command": "make test"}, "verification.command"),
        ({"command": "pytest 'unbalanced"}, "verification.command"),
        ({"command": "{python} -m pytest tests"}, "verification.command"),  # now {interpreter}
        ({"requirements": ["--index-url https://evil.example"]}, "verification.requirements"),
        ({"extras": ["bad extra"]}, "verification.extras"),
        ({"commands": "pytest"}, "verification.commands"),
    ],
)
def test_a_bad_verification_field_in_the_task_exits_2_naming_file_and_field(
    tmp_path: Path, repo: Path, verification: dict, field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    task = tmp_path / "task.yml"
    task.write_text(yaml.safe_dump({**TASK, "verification": verification}))
    run_dir = tmp_path / "run"
    code = main(["run", "--repo", str(repo), "--task", str(task), "--run-dir", str(run_dir), "--offline"])
    err = capsys.readouterr().err
    assert code == 2
    assert str(task) in err and f"field '{field}" in err
    assert not run_dir.exists()


def test_a_bad_verification_field_in_the_config_names_file_and_field(tmp_path: Path) -> None:
    config = tmp_path / "config.yml"
    config.write_text(yaml.safe_dump({"verification": {"command": ["coverage", "run", "app.py"]}}))
    with pytest.raises(Exception, match=rf"{config}: field 'verification.command'") as caught:
        load_settings(config)
    assert type(caught.value).__name__ == "InputError"


@pytest.mark.parametrize(
    ("old", "new"), [("index_url", "index_url"), ("find_links", "local"), ("no_index", "local_only")]
)
def test_a_package_source_under_python_names_its_new_place(tmp_path: Path, old: str, new: str) -> None:
    config = tmp_path / "config.yml"
    config.write_text(yaml.safe_dump({"python": {old: None, "installer": "pip"}}))
    moved = rf"{config}: field 'python': .*{old} moved to packages\.{new}"
    with pytest.raises(Exception, match=moved) as caught:
        load_settings(config)
    assert type(caught.value).__name__ == "InputError"


def test_package_sources_are_read_from_the_packages_section(tmp_path: Path) -> None:
    config = tmp_path / "config.yml"
    sources = {"index_url": "https://x.example/simple", "local_only": True}
    config.write_text(yaml.safe_dump({"packages": sources}))
    settings = load_settings(config)
    assert settings.packages.index_url == "https://x.example/simple" and settings.packages.local_only
    assert settings.packages.local == [] and settings.python.extra_test_requirements is None


def test_a_requirement_no_adapter_reads_names_each_adapters_reason() -> None:
    from pydantic import ValidationError

    from agentic_codemod.config import VerificationSettings

    assert VerificationSettings(requirements=["hypothesis>=6", "-r requirements-test.txt"]).requirements
    with pytest.raises(ValidationError, match=r"python: neither a PEP 508 requirement.*npm: npm installs"):
        VerificationSettings(requirements=["--index-url https://evil.example"])


def test_the_tasks_fields_win_over_the_configs() -> None:
    config = VerificationSettings(command="pytest tests", extras=["test"])
    task = VerificationSettings(command="python -m unittest discover", requirements=["hypothesis"])
    assert task.over(config) == VerificationSettings(
        command="python -m unittest discover", requirements=["hypothesis"], extras=["test"]
    )


@pytest.mark.slow
def test_the_tasks_command_and_requirements_reach_the_run(make_repo, run_codemod, tmp_path: Path) -> None:
    checks = (
        "import unittest\n\nimport acme\n\n\nclass TestApp(unittest.TestCase):\n"
        "    def test_sdk_imports(self):\n        self.assertTrue(acme)\n"
    )
    repo = make_repo("override", {"checks/__init__.py": "", "checks/test_app.py": checks})
    task = tmp_path / "task.yml"
    verification = {
        "command": "python -m unittest discover -s checks -t .",
        "requirements": ["-r requirements.txt"],
    }
    rules = yaml.safe_load((Path(__file__).parents[1] / "fixtures/tasks/acme-sdk-2-rules.yml").read_text())
    task.write_text(yaml.safe_dump({**rules, "verification": verification}))
    result = run_codemod(repo, task)
    m = result.manifest
    baseline = m["verifications"][0]
    assert baseline["command"][-8:] == ["-m", "unittest", "discover", "-v", "-s", "checks", "-t", "."]
    assert baseline["tests"]["passed"] == 1, baseline["output_tail"]  # only checks/, not the pytest suite
    assert result.code == 0, m["reason"]
